// Command aws is the fake aws of scripts/aws's tests (package fakeaws):
// $SKETCHCC_FAKE_AWS names its state file.
package main

import (
	"fmt"
	"os"

	"sketchcc/scripts/aws/internal/fakeaws"
)

func main() {
	state := os.Getenv("SKETCHCC_FAKE_AWS")
	if state == "" {
		fmt.Fprintln(os.Stderr, "fake aws: SKETCHCC_FAKE_AWS is not set")
		os.Exit(255)
	}
	os.Exit(fakeaws.Run(state, os.Args[1:], os.Stdout, os.Stderr))
}
