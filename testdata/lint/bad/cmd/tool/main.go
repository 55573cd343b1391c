// Command tool uses lib. Binaries may spell flags: --batch-updates (NEAR).
package main

import (
	"errors"
	"fmt"

	"lintbad/lib"
)

func main() {
	f := lib.New()
	fmt.Println(lib.Timeout, f, f.Used(), lib.Used(), lib.Wide{}, lib.Twelve{}, "--batch-updates")
	fmt.Println(errors.Is(lib.Check(0), lib.ErrBad), lib.Twelfth(), lib.Thirteen())
}
