package agentvcr_test

import (
	"go/ast"
	"go/build"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// maxExported bounds the public API: every exported name is a promise.
const maxExported = 170

// publicPackage is a package users import, parsed without its tests.
type publicPackage struct {
	dir string
	doc *doc.Package
}

// publicPackages parses the module's importable packages: every directory
// with Go files outside internal/, cmd/, examples/ and testdata.
func publicPackages(t *testing.T) []publicPackage {
	t.Helper()
	var pkgs []publicPackage
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		switch d.Name() {
		case "internal", "cmd", "examples", "testdata", "node_modules":
			return filepath.SkipDir
		}
		if strings.HasPrefix(d.Name(), ".") && path != "." {
			return filepath.SkipDir
		}
		// The package's files as go build picks them (build tags too),
		// test files left out.
		bp, err := build.Default.ImportDir(path, 0)
		if _, none := err.(*build.NoGoError); none {
			return nil
		}
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		var files []*ast.File
		for _, name := range bp.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(path, name), nil, parser.ParseComments)
			if err != nil {
				return err
			}
			files = append(files, f)
		}
		p, err := doc.NewFromFiles(fset, files, path)
		if err != nil {
			return err
		}
		pkgs = append(pkgs, publicPackage{dir: path, doc: p})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// exportedNames lists a package's exported names as a user writes them:
// constants, variables, functions, types, and the methods of its types
// (interface methods included). Struct fields are not counted.
func exportedNames(p *doc.Package) []string {
	var names []string
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			names = append(names, v.Names...)
		}
	}
	values(p.Consts)
	values(p.Vars)
	for _, f := range p.Funcs {
		names = append(names, f.Name)
	}
	for _, typ := range p.Types {
		names = append(names, typ.Name)
		values(typ.Consts)
		values(typ.Vars)
		for _, f := range typ.Funcs {
			names = append(names, f.Name)
		}
		for _, m := range typ.Methods {
			names = append(names, typ.Name+"."+m.Name)
		}
		if it, ok := typ.Decl.Specs[0].(*ast.TypeSpec).Type.(*ast.InterfaceType); ok {
			for _, m := range it.Methods.List {
				for _, n := range m.Names {
					if n.IsExported() {
						names = append(names, typ.Name+"."+n.Name)
					}
				}
			}
		}
	}
	return names
}

func TestPublicAPIIsSmall(t *testing.T) {
	pkgs := publicPackages(t)
	total := 0
	var per []string
	for _, p := range pkgs {
		n := len(exportedNames(p.doc))
		total += n
		per = append(per, p.doc.Name+" "+strconv.Itoa(n))
	}
	for _, want := range []string{"agent", "agentscript", "agentvcrtest", "cassette", "normalize", "recorder", "replayer"} {
		found := false
		for _, p := range pkgs {
			found = found || p.doc.Name == want
		}
		if !found {
			t.Errorf("public package %s not found: the count would miss it", want)
		}
	}
	sort.Strings(per)
	t.Logf("%d exported names: %s", total, strings.Join(per, ", "))
	if total > maxExported {
		t.Errorf("%d exported names in the public packages (%s), more than %d: unexport what no user needs, or move it under internal/",
			total, strings.Join(per, ", "), maxExported)
	}
}

// A user reads the public packages' documentation alone: it must not send
// them into internal/, by import path, by package name or by a name in one.
func TestPublicDocsNameNoInternalPackage(t *testing.T) {
	internal := internalPackageNames(t)
	var alt []string
	for name := range internal {
		alt = append(alt, regexp.QuoteMeta(name))
	}
	sort.Strings(alt)
	named := regexp.MustCompile(`internal/|\bpackage (` + strings.Join(alt, "|") + `)\b|(^|[^\w.])(` + strings.Join(alt, "|") + `)\.[A-Z]`)
	for _, p := range publicPackages(t) {
		add := func(what, text string) {
			if named.MatchString(text) {
				t.Errorf("%s: %s: names an internal package: %q", p.dir, what, named.FindString(text))
			}
		}
		add("package doc", p.doc.Doc)
		for _, v := range append(append([]*doc.Value{}, p.doc.Consts...), p.doc.Vars...) {
			add(strings.Join(v.Names, ", "), v.Doc)
			add(strings.Join(v.Names, ", ")+" declaration", declText(v.Decl))
		}
		for _, f := range p.doc.Funcs {
			add(f.Name, f.Doc)
			add(f.Name+" signature", declText(f.Decl.Type))
		}
		for _, typ := range p.doc.Types {
			add(typ.Name, typ.Doc)
			add(typ.Name+" declaration", declText(typ.Decl))
			for _, f := range append(append([]*doc.Func{}, typ.Funcs...), typ.Methods...) {
				add(typ.Name+"."+f.Name, f.Doc)
				add(typ.Name+"."+f.Name+" signature", declText(f.Decl.Type))
			}
			for _, v := range append(append([]*doc.Value{}, typ.Consts...), typ.Vars...) {
				add(strings.Join(v.Names, ", "), v.Doc)
			}
		}
	}
}

// declText is the source of an exported declaration, its comments
// included, its unexported parts (which go doc hides) left out.
func declText(n ast.Node) string {
	var b strings.Builder
	ast.Inspect(n, func(x ast.Node) bool {
		switch x := x.(type) {
		case *ast.Field:
			exported := len(x.Names) == 0
			for _, name := range x.Names {
				exported = exported || name.IsExported()
			}
			if !exported {
				return false
			}
			if x.Doc != nil {
				b.WriteString(x.Doc.Text())
			}
			if x.Comment != nil {
				b.WriteString(x.Comment.Text())
			}
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok {
				b.WriteString(" " + id.Name + "." + x.Sel.Name + " ")
			}
		}
		return true
	})
	return b.String()
}

// internalPackageNames are the names of the packages under internal/.
func internalPackageNames(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	err := filepath.WalkDir("internal", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.PackageClauseOnly)
		if err != nil {
			return err
		}
		if f.Name.Name != "main" {
			names[f.Name.Name] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("internal"); err != nil {
		t.Fatal(err)
	}
	return names
}
