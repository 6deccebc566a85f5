package workspace

import (
	"bufio"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// A gitignore holds the rules of .gitignore files, .git/info/exclude and the
// global excludes file, for trees git itself cannot list (no git work tree,
// or no git binary). Rules are kept in precedence order, lowest first: the
// last rule that matches a path decides, as in git.
type gitignore struct {
	prefix string // the root relative to the work tree's top; "" outside a work tree
	rules  []ignoreRule
}

type ignoreRule struct {
	base     string // the directory of the file the rule comes from, relative to the root; "" for the root
	pattern  string
	negate   bool
	dirOnly  bool
	anchored bool // the pattern holds a slash: matched against the whole path below base
}

// maxIgnoreFile bounds what is read of one ignore file: a hostile or broken
// one must not be held whole.
const maxIgnoreFile = 1 << 20

// parseIgnore reads gitignore rules from r for files under base.
func parseIgnore(r io.Reader, base string) []ignoreRule {
	var rules []ignoreRule
	sc := bufio.NewScanner(io.LimitReader(r, maxIgnoreFile))
	sc.Buffer(make([]byte, 4096), maxIgnoreFile)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" || line[0] == '#' {
			continue
		}
		line = trimTrailingSpaces(line)
		rule := ignoreRule{base: base}
		if line[0] == '!' {
			rule.negate, line = true, line[1:]
		} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			rule.dirOnly, line = true, strings.TrimRight(line, "/")
		}
		if line == "" {
			continue
		}
		if strings.Contains(line, "/") {
			rule.anchored, line = true, strings.TrimPrefix(line, "/")
		}
		rule.pattern = line
		rules = append(rules, rule)
	}
	return rules
}

// trimTrailingSpaces drops unescaped trailing spaces, as git does.
func trimTrailingSpaces(s string) string {
	for strings.HasSuffix(s, " ") && !strings.HasSuffix(s, `\ `) {
		s = s[:len(s)-1]
	}
	if strings.HasSuffix(s, `\ `) {
		s = s[:len(s)-2] + " "
	}
	return s
}

// readIgnoreFile adds the rules of the file at full, if there is one.
// Non-blocking: a FIFO in a checkout must not hang the recording (it is
// closed unread, as is anything but a regular file). A link is followed:
// the global excludes file is often one, and rules are never printed.
func (g *gitignore) readIgnoreFile(full, base string) {
	f, err := os.OpenFile(full, os.O_RDONLY|nonblock, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return
	}
	g.rules = append(g.rules, parseIgnore(f, base)...)
}

// outerIgnores returns the rules that apply to the whole tree under root:
// the global excludes file and, when root is in a git work tree (found by its
// .git), that tree's info/exclude and the .gitignore files above root. Paths
// are matched relative to the work tree's top.
func outerIgnores(root string) *gitignore {
	g := &gitignore{}
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		g.readIgnoreFile(filepath.Join(x, "git", "ignore"), "")
	} else if home, err := os.UserHomeDir(); err == nil {
		g.readIgnoreFile(filepath.Join(home, ".config", "git", "ignore"), "")
	}
	top, prefix := root, ""
	for {
		if _, err := os.Lstat(filepath.Join(top, ".git")); err == nil {
			break
		}
		parent := filepath.Dir(top)
		if parent == top {
			return g // not in a work tree: the tree's own .gitignore files only
		}
		prefix = path.Join(filepath.Base(top), prefix)
		top = parent
	}
	g.prefix = prefix
	g.readIgnoreFile(filepath.Join(top, ".git", "info", "exclude"), "")
	if prefix == "" {
		return g
	}
	dirs := strings.Split(prefix, "/")
	for i := range dirs { // the .gitignore files above root, the root's own excepted
		above := strings.Join(dirs[:i], "/")
		g.readIgnoreFile(filepath.Join(top, filepath.FromSlash(above), ".gitignore"), above)
	}
	return g
}

// with returns g plus the rules of the .gitignore of dir (relative to the
// root), read through the directory's root.
func (g *gitignore) with(dirRoot *os.Root, dir string) *gitignore {
	f, err := dirRoot.OpenFile(".gitignore", os.O_RDONLY|nonblock, 0)
	if err != nil {
		return g
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return g
	}
	rules := parseIgnore(f, path.Join(g.prefix, dir))
	if len(rules) == 0 {
		return g
	}
	return &gitignore{prefix: g.prefix, rules: append(g.rules[:len(g.rules):len(g.rules)], rules...)}
}

// ignored reports whether the path rel (relative to the root, slash
// separated) is ignored.
func (g *gitignore) ignored(rel string, isDir bool) bool {
	if g == nil {
		return false
	}
	rel = path.Join(g.prefix, rel)
	for i := len(g.rules) - 1; i >= 0; i-- {
		if r := g.rules[i]; r.matches(rel, isDir) {
			return !r.negate
		}
	}
	return false
}

func (r ignoreRule) matches(rel string, isDir bool) bool {
	if r.dirOnly && !isDir {
		return false
	}
	sub := rel
	if r.base != "" {
		if !strings.HasPrefix(rel, r.base+"/") {
			return false
		}
		sub = rel[len(r.base)+1:]
	}
	if !r.anchored {
		return wildmatch(r.pattern, path.Base(sub))
	}
	return wildmatch(r.pattern, sub)
}

// wildmatch matches s against a gitignore pattern: * and ? never match a
// slash, ** as a whole path component matches any number of components,
// [...] is a class ([!...] or [^...] negated), \ quotes the next character.
func wildmatch(p, s string) bool {
	for len(p) > 0 {
		switch p[0] {
		case '*':
			if strings.HasPrefix(p, "**") {
				rest := strings.TrimLeft(p, "*")
				if rest == "" {
					return true // trailing ** matches everything below
				}
				if rest[0] == '/' {
					rest = rest[1:]
					if wildmatch(rest, s) {
						return true
					}
					for i := 0; i < len(s); i++ {
						if s[i] == '/' && wildmatch(rest, s[i+1:]) {
							return true
						}
					}
					return false
				}
			}
			p = strings.TrimLeft(p, "*")
			if p == "" {
				return !strings.Contains(s, "/")
			}
			for i := 0; i <= len(s); i++ {
				if wildmatch(p, s[i:]) {
					return true
				}
				if i < len(s) && s[i] == '/' {
					return false
				}
			}
			return false
		case '?':
			if s == "" || s[0] == '/' {
				return false
			}
			_, n := utf8.DecodeRuneInString(s)
			p, s = p[1:], s[n:]
		case '[':
			if s == "" || s[0] == '/' {
				return false
			}
			c, n := utf8.DecodeRuneInString(s)
			ok, rest, valid := matchClass(p, c)
			if !valid { // an unclosed [ matches itself
				if s[0] != '[' {
					return false
				}
				p, s = p[1:], s[1:]
				continue
			}
			if !ok {
				return false
			}
			p, s = rest, s[n:]
		case '\\':
			if len(p) > 1 {
				p = p[1:]
			}
			fallthrough
		default:
			if s == "" || s[0] != p[0] {
				return false
			}
			p, s = p[1:], s[1:]
		}
	}
	return s == ""
}

// matchClass matches c against the class opening p; rest is the pattern
// after the class; valid is false when the class is not closed.
func matchClass(p string, c rune) (ok bool, rest string, valid bool) {
	i := 1
	negate := false
	if i < len(p) && (p[i] == '!' || p[i] == '^') {
		negate = true
		i++
	}
	first := true
	for i < len(p) {
		if p[i] == ']' && !first {
			return ok != negate, p[i+1:], true
		}
		first = false
		lo, n := classChar(p[i:])
		if n == 0 {
			return false, "", false
		}
		i += n
		hi := lo
		if i+1 < len(p) && p[i] == '-' && p[i+1] != ']' {
			h, m := classChar(p[i+1:])
			if m == 0 {
				return false, "", false
			}
			hi = h
			i += 1 + m
		}
		if lo <= c && c <= hi {
			ok = true
		}
	}
	return false, "", false
}

func classChar(p string) (rune, int) {
	if p[0] == '\\' {
		if len(p) < 2 {
			return 0, 0
		}
		r, n := utf8.DecodeRuneInString(p[1:])
		return r, n + 1
	}
	return utf8.DecodeRuneInString(p)
}
