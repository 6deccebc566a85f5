// Package streamfixture builds Cursor Stream-json runs with one edit each,
// for the tests of the contract and of the diff.
package streamfixture

import "strings"

// BaseRun is a conforming Stream-json run: init, prompt, text, one read tool
// call, more text, result.
var BaseRun = []string{
	`{"type":"system","subtype":"init","apiKeySource":"login","cwd":"/home/u/proj","session_id":"S","model":"Auto","permissionMode":"default"}`,
	`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"Read a.txt"}]},"session_id":"S"}`,
	`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Reading "}]},"session_id":"S"}`,
	`{"type":"tool_call","subtype":"started","call_id":"c1","tool_call":{"readToolCall":{"args":{"path":"a.txt"}}},"session_id":"S"}`,
	`{"type":"tool_call","subtype":"completed","call_id":"c1","tool_call":{"readToolCall":{"args":{"path":"a.txt"},"result":{"success":{"content":"hi","isEmpty":false,"exceededLimit":false,"totalLines":1,"totalChars":2}}}},"session_id":"S"}`,
	`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"a.txt."}]},"session_id":"S"}`,
	`{"type":"result","subtype":"success","duration_ms":10,"duration_api_ms":10,"is_error":false,"result":"Reading a.txt.","session_id":"S","request_id":"r"}`,
}

// run builds a Stream from BaseRun changed by edit (1-based line numbers).
type RunEdit func(lines []string) []string

func JoinLines(lines []string) string { return strings.Join(lines, "\n") + "\n" }

func ReplaceLine(n int, old, new string) RunEdit {
	return func(l []string) []string {
		if !strings.Contains(l[n-1], old) {
			panic("ReplaceLine: " + old + " not in line")
		}
		l[n-1] = strings.Replace(l[n-1], old, new, 1)
		return l
	}
}

func SetLine(n int, s string) RunEdit {
	return func(l []string) []string { l[n-1] = s; return l }
}

func DeleteLine(n int) RunEdit {
	return func(l []string) []string { return append(l[:n-1], l[n:]...) }
}

// InsertLine inserts s so that it becomes line n.
func InsertLine(n int, s string) RunEdit {
	return func(l []string) []string { return append(l[:n-1], append([]string{s}, l[n-1:]...)...) }
}

func CopyLine(from, to int) RunEdit {
	return func(l []string) []string { return InsertLine(to, l[from-1])(l) }
}

func Edits(es ...RunEdit) RunEdit {
	return func(l []string) []string {
		for _, e := range es {
			l = e(l)
		}
		return l
	}
}

func Stream(es ...RunEdit) string {
	return JoinLines(Edits(es...)(append([]string(nil), BaseRun...)))
}

const Thinking = `{"type":"thinking","subtype":"delta","text":"hm","session_id":"S","timestamp_ms":1}`
