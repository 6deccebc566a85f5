package normalize

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/agentvcr/agentvcr/cassette"
)

type tcase struct {
	name string
	opts Options
	in   string
	want string
}

// run normalises each case as stdout, checks the result, and checks that
// normalising the result again changes nothing.
func run(t *testing.T, cases []tcase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := String(tc.in, tc.opts)
			if got != tc.want {
				t.Fatalf("normalise\n  in:   %q\n  got:  %q\n  want: %q", tc.in, got, tc.want)
			}
			if again := String(got, tc.opts); again != got {
				t.Fatalf("not idempotent\n  once:  %q\n  twice: %q", got, again)
			}
		})
	}
}

func text(o Options) Options { o.Format = cassette.Text; return o }

func TestPathBoundaries(t *testing.T) {
	cwd := Options{Format: cassette.Text, Cwd: "/home/u/proj"}
	both := Options{Format: cassette.Text, Cwd: "/home/u/proj", Home: "/home/u"}
	run(t, []tcase{
		{"cwd alone", cwd, "/home/u/proj", "$CWD"},
		{"under cwd", cwd, "edit /home/u/proj/main.go:12\n", "edit $CWD/main.go:12\n"},
		{"sibling with longer name", cwd, "/home/u/project2/x", "/home/u/project2/x"},
		{"sibling with suffix", cwd, "/home/u/proj-old /home/u/proj_x /home/u/proj.bak", "/home/u/proj-old /home/u/proj_x /home/u/proj.bak"},
		{"non-ASCII suffix", cwd, "/home/u/projé", "/home/u/projé"},
		{"inside another path", cwd, "/data/home/u/proj/x", "/data/home/u/proj/x"},
		{"end of sentence", cwd, "I worked in /home/u/proj.", "I worked in $CWD."},
		{"quoted and in a URL", cwd, `cd "/home/u/proj" && open file:///home/u/proj/a`, `cd "$CWD" && open file://$CWD/a`},
		{"cwd before home", both, "/home/u/proj/a /home/u/project2/b /home/u", "$CWD/a $HOME/project2/b $HOME"},
		{"trailing slash in option", Options{Format: cassette.Text, Cwd: "/home/u/proj/"}, "/home/u/proj/a", "$CWD/a"},
		{"temp dir", Options{Format: cassette.Text, TempDir: "/tmp"}, "wrote /tmp/big-out.txt; /tmpfoo", "wrote $TMP/big-out.txt; /tmpfoo"},
		{"macOS private twin", Options{Format: cassette.Text, TempDir: "/var/folders/x1/T"}, "/private/var/folders/x1/T/a /var/folders/x1/T/b", "$TMP/a $TMP/b"},
		{"root too short to scrub", Options{Format: cassette.Text, Cwd: "/"}, "/usr/bin", "/usr/bin"},
		{"JSON value and key", Options{Cwd: "/home/u/proj"},
			`{"cwd":"/home/u/proj","workspaceResults":{"/home/u/proj":{"file":"/home/u/proj/a.go"}},"other":"/home/u/project2"}` + "\n",
			`{"cwd":"$CWD","workspaceResults":{"$CWD":{"file":"$CWD/a.go"}},"other":"/home/u/project2"}` + "\n"},
		{"after a JSON escape", Options{Cwd: "/home/u/proj"}, `{"content":"files:\n/home/u/proj/a\t/home/u/proj/b"}`, `{"content":"files:\n$CWD/a\t$CWD/b"}`},
		{"escaped slashes", Options{Cwd: "/home/u/proj"}, `{"p":"\/home\/u\/proj\/a"}`, `{"p":"$CWD\/a"}`},
	})
}

func TestWindowsPaths(t *testing.T) {
	win := Options{Cwd: `F:\Users\wz\feish`, Home: `F:\Users\wz`}
	run(t, []tcase{
		{"JSON escaped", win,
			`{"cwd":"F:\\Users\\wz\\feish","p":"F:\\Users\\wz\\feish\\src\\a.go","h":"F:\\Users\\wz\\.cursor","sib":"F:\\Users\\wz\\feish2"}` + "\n",
			`{"cwd":"$CWD","p":"$CWD\\src\\a.go","h":"$HOME\\.cursor","sib":"$HOME\\feish2"}` + "\n"},
		{"forward slashes and other case", win, `{"p":"f:/users/WZ/feish/b.go"}`, `{"p":"$CWD/b.go"}`},
		{"JSON inside a JSON string", win,
			`{"content":"{\"cwd\":\"F:\\\\Users\\\\wz\\\\feish\\\\x\"}"}`,
			`{"content":"{\"cwd\":\"$CWD\\\\x\"}"}`},
		{"plain text", text(win), `error in F:\Users\wz\feish\main.go`, `error in $CWD\main.go`},
		{"JSON printed as text", text(win), `{"cwd":"F:\\Users\\wz\\feish"}`, `{"cwd":"$CWD"}`},
		{"learned from the init event", Options{},
			`{"type":"system","subtype":"init","cwd":"F:\\Users\\wz\\feish"}` + "\n" + `{"result":"see F:\\Users\\wz\\feish\\x"}` + "\n",
			`{"type":"system","subtype":"init","cwd":"$CWD"}` + "\n" + `{"result":"see $CWD\\x"}` + "\n"},
	})
}

func TestMangledCwd(t *testing.T) {
	const spill = "5bd4ea50-b3d5-40df-8a46-e2aa3422fca6"
	real := Options{Cwd: "/Users/you/.browsentic/agents/cursor/run/conversation-1", Home: "/Users/you"}
	run(t, []tcase{
		{"spill file of a real run", real,
			`{"path":"/Users/you/.cursor/projects/Users-you-.browsentic-agents-cursor-run-conversation-1/agent-tools/` + spill + `.txt"}`,
			`{"path":"$HOME/.cursor/projects/$CWD_MANGLED/agent-tools/<UUID-1>.txt"}`},
		{"tilde form in text", Options{Format: cassette.Text, Cwd: "/Users/you/proj"},
			"see ~/.cursor/projects/Users-you-proj/agent-tools/x.txt", "see ~/.cursor/projects/$CWD_MANGLED/agent-tools/x.txt"},
		{"not after projects/", Options{Format: cassette.Text, Cwd: "/Users/you/proj"}, "Users-you-proj", "Users-you-proj"},
		{"longer name", Options{Format: cassette.Text, Cwd: "/Users/you/proj"}, "projects/Users-you-proj-2/x", "projects/Users-you-proj-2/x"},
		{"Windows drive", Options{Format: cassette.Text, Cwd: `C:\Users\User\AppData\Local\Temp\d40b`},
			"C:/Users/User/.cursor/projects/C-Users-User-AppData-Local-Temp-d40b/assets and projects/c-Users-User-AppData-Local-Temp-d40b/x",
			"C:/Users/User/.cursor/projects/$CWD_MANGLED/assets and projects/$CWD_MANGLED/x"},
		{"one-level cwd is not mangled", Options{Format: cassette.Text, Cwd: "/projeto"}, "projects/projeto/x o projeto", "projects/projeto/x o projeto"},
	})
}

func TestUUIDs(t *testing.T) {
	const lower = "63381cce-e1aa-4482-8031-72f97c0b99da"
	upper := strings.ToUpper(lower)
	run(t, []tcase{
		{"upper case in prose is the same uuid", text(Options{}),
			"session " + upper + " started; again " + lower + ", then 11111111-2222-3333-4444-555555555555",
			"session <UUID-1> started; again <UUID-1>, then <UUID-2>"},
		{"version nibble 9", text(Options{}), "d1a25f9e-71ca-9cd9-96a0-17875fde495d", "<UUID-1>"},
		{"not a whole uuid", text(Options{}), "x" + lower + " " + lower + "0 " + lower[:35], "x" + lower + " " + lower + "0 " + lower[:35]},
		{"glued to a path", Options{Format: cassette.Text, Cwd: "/home/u/proj"}, lower + "/home/u/proj/x", "<UUID-1>$CWD/x"},
		{"in a file name", text(Options{}), "Screenshot_at_1.00.44_AM-" + lower + ".png", "Screenshot_at_1.00.44_AM-<UUID-1>.png"},
		{"session id and prose share identity", Options{},
			`{"session_id":"` + lower + `","result":"id ` + upper + `"}`,
			`{"session_id":"<SESSION-1>","result":"id <SESSION-1>"}`},
		{"uuid as a member name", Options{}, `{"` + lower + `":1}`, `{"<UUID-1>":1}`},
		{"request and model call", Options{},
			`{"model_call_id":"f3bc0f04-4abb-4ccf-a8fd-525ec7ba765b-0-ypyk","request_id":"F3BC0F04-4abb-4ccf-a8fd-525ec7ba765b","text":"f3bc0f04-4abb-4ccf-a8fd-525ec7ba765b-0-ypyk"}`,
			`{"model_call_id":"<MODEL-CALL-1>","request_id":"<REQUEST-1>","text":"<MODEL-CALL-1>"}`},
	})
}

func TestIDs(t *testing.T) {
	const call = `call_MZSwjBaQcdosfHhvJfsQqWdm\nfc_05e0124e90bd688f01698ca1281b3081939144eaa3db48daf5`
	const call2 = `call-4527fe97-ae65-495f-a546-e3437b635298-0\nfc_d1a25f9e-71ca-9cd9-96a0-17875fde495d_0`
	run(t, []tcase{
		{"call id with a newline", Options{},
			`{"call_id":"` + call + `","tool_call":{"toolCallId":"` + call + `"},"text":"see ` + call + `"}`,
			`{"call_id":"<CALL-1>","tool_call":{"toolCallId":"<CALL-1>"},"text":"see <CALL-1>"}`},
		{"uuid-based call ids", Options{},
			`{"call_id":"` + call2 + `"}` + "\n" + `{"text":"` + call2 + ` and ` + call + `"}` + "\n",
			`{"call_id":"<CALL-1>"}` + "\n" + `{"text":"<CALL-1> and <CALL-2>"}` + "\n"},
		{"short hand-made call id under its key", Options{}, `{"call_id":"call_1"}`, `{"call_id":"<CALL-1>"}`},
		{"JSON call id shown as text", text(Options{}),
			"a " + call + " b call_MZSwjBaQcdosfHhvJfsQqWdm\nfc_05e0124e90bd688f01698ca1281b3081939144eaa3db48daf5",
			"a <CALL-1> b <CALL-1>"},
		{"ids in text", text(Options{}),
			"toolu_vrtx_01NnjaAbCdEf msg_01XyZaBcDeFgH req_011CV2ab3xyz chatcmpl-AbCdEf123456",
			"<CALL-1> <ID-1> <ID-2> <ID-3>"},
		{"words that only look like ids", text(Options{}),
			"tool_call tool_call_started_handler call_graph_v2_analysis my_call_MZSwjBaQcdosfHhvJfsQqWdm",
			"tool_call tool_call_started_handler call_graph_v2_analysis my_call_MZSwjBaQcdosfHhvJfsQqWdm"},
		{"type values stay", Options{}, `{"type":"tool_call","subtype":"started"}`, `{"type":"tool_call","subtype":"started"}`},
		{"empty id stays empty", Options{}, `{"session_id":"","request_id":null}`, `{"session_id":"","request_id":null}`},
	})
}

func TestCallIDAcrossStreams(t *testing.T) {
	n := New(Options{})
	out := n.Bytes([]byte(`{"call_id":"call_MZSwjBaQcdosfHhvJfsQqWdm\nfc_05e0124e90bd"}`+"\n"), cassette.Stdout)
	errOut := n.Bytes([]byte("failed: call_MZSwjBaQcdosfHhvJfsQqWdm\nfc_05e0124e90bd after 350ms\n"), cassette.Stderr)
	if want := `{"call_id":"<CALL-1>"}` + "\n"; string(out) != want {
		t.Errorf("stdout = %q, want %q", out, want)
	}
	if want := "failed: <CALL-1> after <DURATION>\n"; string(errOut) != want {
		t.Errorf("stderr = %q, want %q", errOut, want)
	}
}

func TestClocksAndDurations(t *testing.T) {
	run(t, []tcase{
		{"durations in text", text(Options{}),
			"took 1.2s, 350ms, 2m30s, real 0m5.003s, 800µs, 1h2m3s",
			"took <DURATION>, <DURATION>, <DURATION>, real <DURATION>, <DURATION>, <DURATION>"},
		{"not durations", text(Options{}), "sleep 5; 5m; 3min; v1.2s; 10sec; 1.5", "sleep 5; 5m; 3min; v1.2s; 10sec; 1.5"},
		{"date-times", text(Options{}),
			"at 2026-05-10T10:22:33.123Z, 2026-05-10 10:22:33+02:00, 2026-05-10T10:22Z",
			"at <TIMESTAMP>, <TIMESTAMP>, <TIMESTAMP>"},
		{"dates and times", text(Options{}), "on 2026-05-10 at 14:03:59.5 (not 2026-13-45, 25:00:00 or 13:45)",
			"on <DATE> at <TIME> (not 2026-13-45, 25:00:00 or 13:45)"},
		{"epoch milliseconds", text(Options{}),
			"1761820265014 t1761820265014-1761820287862 17618202650140 9999999999999 abc1761820265014 t1761820265014call_MZSwjBaQcdosfHhvJfsQqWdm",
			"<TIMESTAMP> t<TIMESTAMP>-<TIMESTAMP> 17618202650140 9999999999999 abc1761820265014 t1761820265014call_MZSwjBaQcdosfHhvJfsQqWdm"},
		{"measures in JSON keep their types", Options{},
			`{"duration_ms":8920,"duration_api_ms":8920,"timeout":30000,"timestamp_ms":1791192424927,"startedAtMs":"1791192424870","usage":{"inputTokens":21061,"cacheWriteTokens":0,"maxTokens":4096},"executionTime":4162,"createdAt":"2026-05-10T10:00:00Z","format":"x","n":1791192424927,"fileSize":53,"total_cost_usd":0.0123}`,
			`{"duration_ms":0,"duration_api_ms":0,"timeout":30000,"timestamp_ms":0,"startedAtMs":"<TIMESTAMP>","usage":{"inputTokens":0,"cacheWriteTokens":0,"maxTokens":4096},"executionTime":0,"createdAt":"<TIMESTAMP>","format":"x","n":0,"fileSize":53,"total_cost_usd":0}`},
		{"measure in an array", Options{}, `{"durations":[1,2.5,"3s"]}`, `{"durations":[0,0,"<DURATION>"]}`},
		// A tool's JSON output carried as a tool result's text.
		{"measures in JSON inside a string", Options{},
			`{"content":"success: {\"command\":\"wc -l x\",\"executionTime\":2,\"elapsed_ms\":12.5,\"size\":42}"}`,
			`{"content":"success: {\"command\":\"wc -l x\",\"executionTime\":0,\"elapsed_ms\":0,\"size\":42}"}`},
		{"measures in JSON in text", text(Options{}), `ran {"executionTime": 7}`, `ran {"executionTime": 7}`},
		{"measures in indented JSON inside a string", Options{}, `{"text":"{\n  \"took_ms\": 9,\n  \"bytes\": 12}"}`, `{"text":"{\n  \"took_ms\": 0,\n  \"bytes\": 12}"}`},
	})
}

func TestJSONLayout(t *testing.T) {
	run(t, []tcase{
		{"spacing and order kept", Options{Format: cassette.JSON},
			"{\n  \"zeta\" : 1 ,\n  \"session_id\" : \"abc\",\n\t\"alpha\":[ true, false, null, -1.5e3 ],\n  \"s\": \"caf\\u00e9 \\/ \\\" 2026-01-02\"\n}\n",
			"{\n  \"zeta\" : 1 ,\n  \"session_id\" : \"<SESSION-1>\",\n\t\"alpha\":[ true, false, null, -1.5e3 ],\n  \"s\": \"caf\\u00e9 \\/ \\\" <DATE>\"\n}\n"},
		{"comment and blank lines", Options{Format: cassette.StreamJSON},
			"# recorded 2026-09-18\n\n{\"duration_ms\":5}\n\n\n",
			"# recorded <DATE>\n\n{\"duration_ms\":0}\n\n\n"},
		{"a line that is not JSON is scrubbed as text", Options{Format: cassette.StreamJSON},
			"Warning: slow request 1.2s\n{\"duration_ms\":5}\n",
			"Warning: slow request <DURATION>\n{\"duration_ms\":0}\n"},
		{"an event cut short does not swallow the next", Options{Format: cassette.StreamJSON},
			"{\"type\":\"assistant\",\"timestamp_ms\":1791192424927,\"text\":\"unterminated\n{\"duration_ms\":5}\n",
			"{\"type\":\"assistant\",\"timestamp_ms\":0,\"text\":\"unterminated\n{\"duration_ms\":0}\n"},
		{"broken JSON ends as text", Options{Format: cassette.StreamJSON},
			"{\"a\":1, oops 350ms}\n{\"b\":2}\n",
			"{\"a\":1, oops <DURATION>}\n{\"b\":2}\n"},
		{"top-level scalars", Options{Format: cassette.StreamJSON},
			"1761820265014\n\"2026-01-02\"\n350ms elapsed\n2026-05-10 started\n",
			"0\n\"<DATE>\"\n<DURATION> elapsed\n<DATE> started\n"},
		{"no final newline", Options{Format: cassette.StreamJSON}, `{"timestamp_ms":1}`, `{"timestamp_ms":0}`},
		{"text format never parses JSON", Options{Format: cassette.Text}, `{"timestamp_ms":1}`, `{"timestamp_ms":1}`},
	})
}

func TestAutoFormat(t *testing.T) {
	in := `{"timestamp_ms":1}` + "\n" + `{"timestamp_ms":2}` + "\n"
	if got, want := String(in, Options{}), `{"timestamp_ms":0}`+"\n"+`{"timestamp_ms":0}`+"\n"; got != want {
		t.Errorf("auto on stream-json: got %q, want %q", got, want)
	}
	txt := "Read file\n{\"timestamp_ms\":1}\n"
	if got := String(txt, Options{}); got != txt {
		t.Errorf("auto on text parsed JSON: got %q", got)
	}
}

func TestStderrIsText(t *testing.T) {
	n := New(Options{Format: cassette.StreamJSON})
	got := n.Bytes([]byte(`{"timestamp_ms":1} at 2026-05-10T10:00:00Z`), cassette.Stderr)
	if want := `{"timestamp_ms":1} at <TIMESTAMP>`; string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestSmallReads feeds every real transcript one byte at a time: buffer
// boundaries must not change the output.
func TestSmallReads(t *testing.T) {
	for name, data := range realworld(t) {
		for _, f := range []cassette.Format{cassette.StreamJSON, cassette.Text} {
			opts := Options{Format: f, Home: "/Users/you"}
			want := New(opts).Bytes(data, cassette.Stdout)
			var got bytes.Buffer
			if err := New(opts).Copy(&got, iotest.OneByteReader(bytes.NewReader(data)), cassette.Stdout); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%s (%v): one-byte reads give different output", name, f)
			}
		}
	}
}

// TestLongValues checks values and lines far longer than the read buffer:
// matches that straddle window boundaries must be found all the same.
func TestLongValues(t *testing.T) {
	const u = "63381cce-e1aa-4482-8031-72f97c0b99da"
	chunk := "in /home/u/proj/a.go " + u + " after 350ms \\n\\\"/home/u/proj\\\" caf\\u00e9 "
	normChunk := "in $CWD/a.go <UUID-1> after <DURATION> \\n\\\"$CWD\\\" caf\\u00e9 "
	const reps = 30000 // about 2 MiB, with chunks cut at every offset of the window
	opts := Options{Format: cassette.StreamJSON, Cwd: "/home/u/proj"}

	in := `{"session_id":"` + strings.Repeat(chunk, reps) + `","text":"` + strings.Repeat(chunk, reps) + `","timestamp_ms":1}` + "\n"
	want := `{"session_id":"` + strings.Repeat(normChunk, reps) + `","text":"` + strings.Repeat(normChunk, reps) + `","timestamp_ms":0}` + "\n"
	if got := String(in, opts); got != want {
		t.Errorf("long JSON strings: output differs (len %d, want %d) at byte %d", len(got), len(want), firstDiff(got, want))
	}

	line := strings.Repeat(strings.ReplaceAll(chunk, `\`, ""), reps) + "\n"
	wantLine := strings.Repeat(strings.ReplaceAll(normChunk, `\`, ""), reps) + "\n"
	if got := String(line, opts); got != wantLine {
		t.Errorf("long non-JSON line: output differs at byte %d", firstDiff(got, wantLine))
	}
	if got := String(line, text(opts)); got != wantLine {
		t.Errorf("long text: output differs at byte %d", firstDiff(got, wantLine))
	}
	// A long value under an id key is scrubbed as text, and stays valid JSON.
	if got := String(`{"call_id":"`+strings.Repeat("x", 300<<10)+`"}`, opts); !json.Valid([]byte(got)) {
		t.Error("long id value: output is not valid JSON")
	}
}

func firstDiff(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// scrubDefault asks atWord only at words whose first byte is in
// wordMayMatch or starts a root: at any other word atWord matches nothing,
// whatever follows the first byte and whatever the directories.
func TestAtWordOnlyWhereItMayMatch(t *testing.T) {
	tails := []string{"", "oolu_01ABCDEFGHIJKLMNOP", "all_MZSwjBaQcdosfHhvJfsQqWdm", "1ca6bf", "3381cce-e1aa-4482-8031-72f97c0b99d", "c_0123456789ab",
		"026-05-10T10:00:00Z", "50ms", "761820265014", "ome/u/proj/a.go", ":\\Temp\\x", "sg_0123456789ab", "eq-0123456789ab", "word"}
	for _, opts := range []Options{{}, {Cwd: "/home/u/proj", Home: "/home/u", TempDir: "C:\\Temp"}, {Cwd: "C:\\work\\proj"}} {
		n := New(opts)
		for c := range 256 {
			if byteClass[c] != clsWord || wordMayMatch[c] || n.roots.wordStart[c] {
				continue
			}
			for _, tail := range tails {
				for _, before := range []string{"", " ", "Chunk ID: ", "x."} {
					s := []byte(before + string(rune(c)) + tail)
					for _, esc := range []bool{false, true} {
						if m, rep := n.atWord(s, len(before), esc, clsOther); m != 0 {
							t.Errorf("atWord(%q) at a word starting %q matched %d bytes as %q", s, c, m, rep)
						}
					}
				}
			}
		}
	}
}

// shortWriter takes one byte less than it is given, and says nothing of it,
// as a broken writer may.
type shortWriter struct{}

func (shortWriter) Write(p []byte) (int, error) { return max(len(p)-1, 0), nil }

// A writer that takes less than it is given and returns no error fails the
// copy with io.ErrShortWrite, as io.Copy does: otherwise output is lost
// without a word. Small runs are normalised in one pass, large ones in
// pieces; both are checked.
func TestCopyReportsAShortWrite(t *testing.T) {
	line := `{"type":"assistant","session_id":"28df8803-812b-cccf-ad6b-26e4b13e702d","text":"hello"}` + "\n"
	for _, size := range []int{len(line), 8 << 20} {
		data := strings.Repeat(line, size/len(line))
		err := New(Options{Format: cassette.StreamJSON}).Copy(shortWriter{}, strings.NewReader(data), cassette.Stdout)
		if !errors.Is(err, io.ErrShortWrite) {
			t.Errorf("%d bytes: Copy returned %v, want io.ErrShortWrite", len(data), err)
		}
		// Sorting sets, Copy writes through a sorter, which must say so too.
		err = New(Options{Format: cassette.StreamJSON, Sets: []string{"tools"}}).Copy(shortWriter{}, strings.NewReader(data), cassette.Stdout)
		if !errors.Is(err, io.ErrShortWrite) {
			t.Errorf("%d bytes, sorting sets: Copy returned %v, want io.ErrShortWrite", len(data), err)
		}
	}
}

// scrubDefault skips text up to the word before a byte that is not plain:
// it scrubs every text as the byte-by-byte walk does (Normalizer.plain),
// matches of every kind and roots with spaces in them before and after
// any boundary.
func TestScrubSkipsOnlyPlainText(t *testing.T) {
	frags := []string{"Chunk ID: beef", "Chunk ID: 1ca6bf", "home/John Smith/proj/x", "John Smith-proj", "call_MZSwjBaQcdosfHhvJfsQqWdm",
		"deadbeef-dead-beef-dead-beefdeadbeef", "2026-05-10T10:00:00Z", "10:00:01", "350ms", "2m30s", "800µs", "t1761820265014", "tokens used: 351",
		"tokens used\n351", "/run/cc-socks/27963.sock", `{\"executionTime\": 2}`, "projects/home-John-Smith-proj-x", "word", "x.y",
		`\n`, `\"`, `\\`, `C:\Temp\x`, `c:/temp/x`, "/home/John Smith/proj/x/a.go", "Wall time: 0.1044 seconds"}
	seps := []string{"", " ", ".", ":", "\n", "/", "_", "-", "a"}
	for _, opts := range []Options{{}, {Cwd: "/home/John Smith/proj/x", Home: "/home/John Smith", TempDir: `C:\Temp`}, {Cwd: `C:\work\proj`}} {
		n := New(opts)
		for _, a := range frags {
			for _, sep := range seps {
				for _, b := range frags {
					s := []byte("see " + a + sep + b)
					for _, esc := range []bool{false, true} {
						var st scrubState
						n.plain = true
						want, _ := n.scrub(nil, s, esc, true, &st)
						n.plain = false
						st = scrubState{}
						got, _ := n.scrub(nil, s, esc, true, &st)
						if !bytes.Equal(got, want) {
							t.Fatalf("scrub(%q, esc %v) with %+v:\n got:  %q\n want: %q", s, esc, opts, got, want)
						}
					}
				}
			}
		}
	}
}
