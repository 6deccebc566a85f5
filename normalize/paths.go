package normalize

import (
	"slices"
	"strings"
)

// Symbolic roots written in place of absolute directories.
const (
	placeCwd        = "$CWD"
	placeHome       = "$HOME"
	placeTmp        = "$TMP"
	placeCwdMangled = "$CWD_MANGLED"
)

// spelling is one way a root directory can be written in the output.
type spelling struct {
	text    string
	repl    string
	fold    bool // compare ignoring ASCII case (Windows paths)
	inJSON  bool // usable inside a JSON string (escapes complete)
	inText  bool // usable in plain text
	mangled bool // the ~/.cursor/projects/<name> form: only after "projects/"
	// relative is the cwd as a path from the root: not after another
	// path's separator, but after git's "a/" and "b/"
	relative bool
}

// rootSet holds every spelling of the roots, longest first, indexed by first byte.
type rootSet struct {
	byFirst   [256][]spelling
	longest   int
	start     [256]bool // roots starting with a separator
	wordStart [256]bool // roots starting with a letter (drives, mangled cwd)
	// plain is basePlain less a byte of each spelling (see scrubDefault),
	// once one was added (plainSet).
	plain    [256]uint8
	plainSet bool
}

func (rs *rootSet) add(sp spelling) {
	if len(sp.text) < 2 {
		return
	}
	firsts := []byte{sp.text[0]}
	if sp.fold {
		firsts = []byte{lowerASCII(sp.text[0]), upperASCII(sp.text[0])}
		if firsts[0] == firsts[1] {
			firsts = firsts[:1]
		}
	}
	if !rs.plainSet {
		rs.plain, rs.plainSet = basePlain, true
	}
	// The first byte of the spelling that is no plain text, or ends a word
	// where the scrubber could skip to: a match of it holds a byte that is
	// not plain, with no boundary before it.
	q := 0
	for q < len(sp.text)-1 && basePlain[sp.text[q]] == 1 && byteClass[sp.text[q]] != clsOther {
		q++
	}
	rs.plain[sp.text[q]] = 0
	if sp.fold {
		rs.plain[lowerASCII(sp.text[q])], rs.plain[upperASCII(sp.text[q])] = 0, 0
	}
	for _, c := range firsts {
		list := rs.byFirst[c]
		if slices.ContainsFunc(list, func(o spelling) bool { return o.text == sp.text && o.inJSON == sp.inJSON && o.inText == sp.inText }) {
			continue
		}
		list = append(slices.Clip(list), sp) // a copy: the list may be shared
		slices.SortStableFunc(list, func(a, b spelling) int { return len(b.text) - len(a.text) })
		rs.byFirst[c] = list
	}
	rs.longest = max(rs.longest, len(sp.text))
}

// addRoot registers every spelling of dir: as written, JSON-escaped, escaped
// twice (JSON inside a JSON string), and for Windows paths with forward
// slashes; on macOS temp paths also the /private twin.
func (rs *rootSet) addRoot(dir, repl string) {
	dir = cleanRoot(dir)
	if dir == "" {
		return
	}
	win := isWindowsPath(dir)
	forms := []string{dir}
	if win {
		forms = append(forms, strings.ReplaceAll(dir, `\`, "/"))
	} else if strings.HasPrefix(dir, "/private/") {
		forms = append(forms, strings.TrimPrefix(dir, "/private"))
	} else if strings.HasPrefix(dir, "/var/") || strings.HasPrefix(dir, "/tmp/") || dir == "/tmp" {
		forms = append(forms, "/private"+dir)
	}
	for _, f := range forms {
		esc := jsonEscape(f)
		esc2 := jsonEscape(esc)
		rawOK := esc == f // needs no escaping: fine inside JSON too
		rs.add(spelling{text: f, repl: repl, fold: win, inText: true, inJSON: rawOK})
		rs.add(spelling{text: esc, repl: repl, fold: win, inText: true, inJSON: true})
		rs.add(spelling{text: esc2, repl: repl, fold: win, inText: true, inJSON: true})
		if slashed := strings.ReplaceAll(esc, "/", `\/`); slashed != esc {
			rs.add(spelling{text: slashed, repl: repl, fold: win, inText: true, inJSON: true})
		}
	}
}

// addMangled registers the name ~/.cursor/projects/ gives the directory dir:
// the path without its leading separators, each separator turned into "-"
// (a drive's colon dropped): /Users/you/proj is Users-you-proj, and
// C:\Users\you\proj is C-Users-you-proj. Dots stay; spaces may become "-".
func (rs *rootSet) addMangled(dir string) {
	dir = cleanRoot(dir)
	if dir == "" {
		return
	}
	win := isWindowsPath(dir)
	var forms []string
	base := strings.TrimLeft(dir, `/\`)
	if win && len(base) >= 2 && base[1] == ':' {
		base = base[:1] + base[2:]
	}
	m := strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' {
			return '-'
		}
		return r
	}, strings.TrimLeft(base, `/\`))
	if !strings.Contains(m, "-") {
		return // a one-level directory mangles to a plain word: too easy to mistake
	}
	forms = append(forms, m)
	if strings.ContainsAny(m, " _") {
		forms = append(forms, strings.NewReplacer(" ", "-", "_", "-").Replace(m))
	}
	// Claude Code's ~/.claude/projects/<name>: every character but a letter
	// or digit becomes "-", the leading separator included (/tmp/a.b/w is
	// -tmp-a-b-w).
	claude := strings.Map(func(r rune) rune {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return r
		}
		return '-'
	}, dir)
	if !slices.Contains(forms, claude) {
		forms = append(forms, claude)
	}
	for _, f := range forms {
		esc := jsonEscape(f)
		rs.add(spelling{text: f, repl: placeCwdMangled, fold: win, inText: true, inJSON: esc == f, mangled: true})
		if esc != f {
			rs.add(spelling{text: esc, repl: placeCwdMangled, fold: win, inJSON: true, mangled: true})
		}
	}
}

// rootRelative is a Unix directory as a path from the root, without its
// leading "/" ("home/u/proj"), when it has three components or more: fewer
// would match words of prose.
func rootRelative(dir string) string {
	dir = cleanRoot(dir)
	if !strings.HasPrefix(dir, "/") || isWindowsPath(dir) {
		return ""
	}
	rel := strings.TrimLeft(dir, "/")
	if strings.Count(rel, "/") < 2 {
		return ""
	}
	return rel
}

// cleanRoot drops trailing separators and refuses roots that would match too much.
func cleanRoot(dir string) string {
	for len(dir) > 1 && (dir[len(dir)-1] == '/' || dir[len(dir)-1] == '\\') {
		dir = dir[:len(dir)-1]
	}
	if len(dir) < 2 || strings.HasPrefix(dir, "$") || strings.HasPrefix(dir, "<") {
		return ""
	}
	if isWindowsPath(dir) && len(dir) <= 3 { // "C:" or "C:\" alone
		return ""
	}
	return dir
}

// isWindowsPath reports a drive path (C:\x, C:/x) or a UNC path (\\host\x).
func isWindowsPath(p string) bool {
	if len(p) >= 2 && p[1] == ':' && isLetter(p[0]) {
		return true
	}
	return strings.HasPrefix(p, `\\`)
}

// jsonEscape escapes s as it would appear inside a JSON string, without HTML escaping.
func jsonEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\r':
			b.WriteString(`\r`)
		case c < 0x20:
			const hex = "0123456789abcdef"
			b.WriteString(`\u00`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
func upperASCII(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

// hasPrefixFold is bytes.HasPrefix, ignoring ASCII case when fold is set.
func hasPrefixFold(s []byte, prefix string, fold bool) bool {
	if len(s) < len(prefix) {
		return false
	}
	if !fold {
		return string(s[:len(prefix)]) == prefix
	}
	for i := 0; i < len(prefix); i++ {
		if lowerASCII(s[i]) != lowerASCII(prefix[i]) {
			return false
		}
	}
	return true
}
