package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"sort"
	"strings"
	"time"
)

// Summary is what one stream-json run says about itself.
type Summary struct {
	Session  string
	Model    string
	Events   int    // JSON events read
	Tools    []Tool // by kind, in order of first use
	Result   string // the terminal result's text
	Duration time.Duration
	// Complete is set when the stream ended with its terminal result event.
	Complete bool
	// Written lists the files the agent's write tool wrote, in order.
	Written []string
}

// Tool counts the calls of one tool kind ("readToolCall", ...).
type Tool struct {
	Kind   string
	Calls  int
	Failed int // completions whose result is not "success"
}

// event holds the fields of a stream-json event that a summary needs;
// everything else is ignored, as the contract asks of consumers.
type event struct {
	Type      string                     `json:"type"`
	Subtype   string                     `json:"subtype"`
	SessionID string                     `json:"session_id"`
	Model     string                     `json:"model"`
	ToolCall  map[string]json.RawMessage `json:"tool_call"`
	Result    string                     `json:"result"`
	Duration  float64                    `json:"duration_ms"`
}

// Summarize reads stream-json events until r ends. Lines may be of any
// length (tool results reach megabytes); lines that are not JSON objects are
// skipped.
func Summarize(r io.Reader) (Summary, error) {
	var s Summary
	tools := map[string]int{} // kind → index in s.Tools
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if line = bytes.TrimSpace(line); len(line) > 0 && line[0] == '{' {
			var ev event
			if json.Unmarshal(line, &ev) == nil {
				s.add(ev, tools)
			}
		}
		if err == io.EOF {
			return s, nil
		}
		if err != nil {
			return s, err
		}
	}
}

func (s *Summary) add(ev event, tools map[string]int) {
	s.Events++
	if s.Session == "" {
		s.Session = ev.SessionID
	}
	switch ev.Type {
	case "system":
		if ev.Subtype == "init" {
			s.Model = ev.Model
		}
	case "tool_call":
		s.addTool(ev, tools)
	case "result":
		s.Complete = true
		s.Result = ev.Result
		s.Duration = time.Duration(ev.Duration * float64(time.Millisecond))
	}
}

// addTool counts a started call under its kind, the one key of tool_call
// that ends in "ToolCall", and a completion without a success result as failed.
func (s *Summary) addTool(ev event, tools map[string]int) {
	var kinds []string
	for k := range ev.ToolCall {
		if strings.HasSuffix(k, "ToolCall") {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) == 0 {
		return
	}
	sort.Strings(kinds)
	kind := kinds[0]
	i, ok := tools[kind]
	if !ok {
		i = len(s.Tools)
		tools[kind] = i
		s.Tools = append(s.Tools, Tool{Kind: kind})
	}
	t := &s.Tools[i]
	switch ev.Subtype {
	case "started":
		t.Calls++
		if kind == "writeToolCall" {
			var call struct {
				Args struct {
					Path string `json:"path"`
				} `json:"args"`
			}
			if json.Unmarshal(ev.ToolCall[kind], &call) == nil && call.Args.Path != "" {
				s.Written = append(s.Written, call.Args.Path)
			}
		}
	case "completed":
		var call struct {
			Result map[string]json.RawMessage `json:"result"`
		}
		json.Unmarshal(ev.ToolCall[kind], &call)
		if _, ok := call.Result["success"]; !ok {
			t.Failed++
		}
	}
}
