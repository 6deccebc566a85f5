// Command fakemodel serves package fakemodel on a loopback port and prints
// its base URL on the first line of stdout; it runs until killed.
//
//	fakemodel [-log FILE] [-bodies FILE]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"

	"github.com/agentvcr/agentvcr/internal/testsupport/fakemodel"
)

func main() {
	logFile := flag.String("log", "", "append one line per request to `FILE`")
	bodies := flag.String("bodies", "", "append each request's path and body to `FILE` (to see what an agent asks, when adding one)")
	flag.Parse()
	s := &fakemodel.Server{}
	var h http.Handler = s
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fakemodel:", err)
			os.Exit(2)
		}
		s.Log = f
	}
	if *bodies != "" {
		f, err := os.OpenFile(*bodies, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fakemodel:", err)
			os.Exit(2)
		}
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			fmt.Fprintf(f, "%s %s\n%s\n", r.Method, r.URL.Path, b)
			r.Body = io.NopCloser(bytes.NewReader(b))
			s.ServeHTTP(w, r)
		})
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakemodel:", err)
		os.Exit(2)
	}
	fmt.Printf("http://%s\n", ln.Addr())
	os.Stdout.Sync()
	fmt.Fprintln(os.Stderr, "fakemodel:", http.Serve(ln, h))
	os.Exit(1)
}
