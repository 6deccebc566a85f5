// Command fakemodel serves package fakemodel on a loopback port and prints
// its base URL on the first line of stdout; it runs until killed.
//
//	fakemodel [-log FILE]
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/agentvcr/agentvcr/internal/fakemodel"
)

func main() {
	logFile := flag.String("log", "", "append one line per request to `FILE`")
	flag.Parse()
	s := &fakemodel.Server{}
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fakemodel:", err)
			os.Exit(2)
		}
		s.Log = f
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakemodel:", err)
		os.Exit(2)
	}
	fmt.Printf("http://%s\n", ln.Addr())
	os.Stdout.Sync()
	fmt.Fprintln(os.Stderr, "fakemodel:", http.Serve(ln, s))
	os.Exit(1)
}
