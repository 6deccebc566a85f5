// Command realworld says whether the real-world corpus tests can run: make
// test prints its line, since go test shows no skipped test without -v.
package main

import (
	"fmt"
	"os"

	"github.com/agentvcr/agentvcr/internal/testsupport/corpus"
)

func main() {
	if _, err := corpus.Transcripts(); err != nil {
		fmt.Fprintf(os.Stderr, "make test: the real-world corpus tests were skipped: %v; they read the transcripts in ../shared/realworld beside the module, or in $AGENTVCR_REALWORLD\n", err)
		return
	}
	dir, _ := corpus.RealWorldDir()
	fmt.Printf("make test: the real-world corpus tests ran on the transcripts in %s\n", dir)
}
