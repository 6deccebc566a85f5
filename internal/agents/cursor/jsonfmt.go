package cursor

import (
	"bufio"
	"bytes"
	"fmt"

	"github.com/agentvcr/agentvcr/internal/engine/contract"
	"github.com/agentvcr/agentvcr/internal/engine/jsonscan"
)

// jsonState is what the json format rules learn from stdout. Which rules
// apply depends on the exit status, known only at Finish: problems of a
// successful run wait in success; objects that a failed run must not print
// are listed in objects.
type jsonState struct {
	empty   bool               // no value on stdout at all
	success []contract.Problem // problems if the run succeeded
	objects []int              // lines where a well-formed JSON object starts
	collect bool               // route problems to success
}

// readJSON checks the json format: one object (possibly pretty-printed) and
// one newline on success.
func (v *Validator) readJSON(br *bufio.Reader) error {
	v.json.collect = true
	defer func() { v.json.collect = false }()
	var (
		buf     []byte
		start   int // first line of the value
		depth   jsonscan.DepthTracker
		done    bool
		lastNL  bool
		extra   int // non-blank lines after the value
		blanks  int // blank lines after the value
		extraAt int
	)
	lines, err := jsonscan.EachLine(br, func(n int, line []byte, nl bool) {
		switch {
		case line == nil: // too long to hold: the document cannot be checked whole
			v.add(contract.Problem{Line: n, Rule: contract.RuleSingleJSON, Msg: jsonscan.TooLong})
			buf, done = nil, true
			return
		case v.skippable(n, line):
			return
		case done:
			if len(bytes.TrimSpace(line)) == 0 {
				blanks++
			} else {
				extra++
				if k, _, _, err := jsonscan.ScanDocument(line); err == nil && k == jsonscan.Object {
					v.json.objects = append(v.json.objects, n)
				}
			}
			if extraAt == 0 {
				extraAt = n
			}
			return
		case start == 0 && len(bytes.TrimSpace(line)) == 0:
			v.add(contract.Problem{Line: n, Rule: contract.RuleSingleJSON, Msg: "blank line before the JSON object"})
			return
		case start == 0:
			start = n
		default:
			buf = append(buf, '\n')
		}
		buf = append(buf, line...)
		lastNL = nl
		if depth.Feed(line) {
			done = true
			v.jsonValue(start, buf, lastNL)
			buf = nil
		}
	})
	if err != nil {
		return err
	}
	v.lines = lines
	if !done && start > 0 {
		v.jsonValue(start, buf, lastNL)
	}
	v.json.empty = start == 0
	switch {
	case extraAt == 0:
	case extra == 0:
		v.add(contract.Problem{Line: extraAt, Rule: contract.RuleSingleJSON, Msg: fmt.Sprintf("%d blank lines after the JSON object, want exactly one newline", blanks)})
	default:
		v.add(contract.Problem{Line: extraAt, Rule: contract.RuleSingleJSON, Msg: fmt.Sprintf("output after the JSON object (%d more lines), want exactly one object", extra+blanks)})
	}
	return nil
}

// jsonValue checks the json format's value, first line start.
func (v *Validator) jsonValue(start int, doc []byte, newline bool) {
	v.setDoc(doc, start, true)
	k, s, e, err := v.ec.parse(doc)
	switch {
	case err != nil:
		v.problemAt(errOffset(err), contract.RuleSingleJSON, "not one JSON object: "+err.Error())
		return
	case k != jsonscan.Object:
		v.problemAt(s, contract.RuleSingleJSON, fmt.Sprintf("stdout holds %s, want one JSON object", k.Article()))
		return
	}
	v.json.objects = append(v.json.objects, v.lineOf(s))
	var info eventInfo
	v.ec.check(&info)
	if info.kind != kindResult && !info.broken {
		v.problemAt(s, contract.RuleLiteral, fmt.Sprintf("the object's type is %s, want \"result\"", label(string(info.typ), string(info.subtype))))
	}
	if !newline {
		v.problemAt(e, contract.RuleNewline, "the JSON object is not followed by a newline")
	}
}

// jsonEnd applies the json rules that depend on the exit status.
func (v *Validator) jsonEnd() {
	j := &v.json
	if v.exit != 0 && v.exit != contract.ExitUnknown {
		// A failed run: stdout may hold anything but a well-formed object.
		for _, line := range j.objects {
			v.add(contract.Problem{Line: line, Rule: contract.RuleFailure, Msg: fmt.Sprintf("exit status %d but stdout holds a well-formed JSON object", v.exit)})
		}
		return
	}
	v.problems = append(v.problems, j.success...)
	if j.empty && v.exit == 0 {
		v.add(contract.Problem{Where: contract.WhereExit, Rule: contract.RuleSingleJSON, Msg: "exit status 0 but stdout holds no JSON object"})
	}
}

// text checks the text format: no JSON events on stdout.
func (v *Validator) text(br *bufio.Reader) error {
	n, err := jsonscan.EachLine(br, func(n int, line []byte, _ bool) {
		if v.skippable(n, line) {
			return
		}
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] == '{' {
			if k, _, _, err := jsonscan.ScanDocument(t); err == nil && k == jsonscan.Object {
				v.add(contract.Problem{Line: n, Rule: contract.RuleTextNoJSON, Msg: "JSON event in text output"})
			}
		}
	})
	if err != nil {
		return err
	}
	v.lines = n
	return nil
}
