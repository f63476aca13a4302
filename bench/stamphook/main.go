// Command stamphook is the floor of the reply benchmarks: a Claude Code
// hook that does nothing but note when it ran. Registered beside ccbridge's
// own Stop hook, it shows when Claude Code fires Stop, so what comes after
// that is ccbridge's share. It appends "<prompt_id> <unix ns>" to the file
// named by its argument.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"
)

func main() {
	at := time.Now() // first: the stamp is when the hook runs, not when it is done
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: stamphook FILE < hook-payload.json")
		os.Exit(2)
	}
	var in struct {
		PromptID string `json:"prompt_id"`
	}
	_ = json.NewDecoder(os.Stdin).Decode(&in)
	f, err := os.OpenFile(os.Args[1], os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stamphook:", err)
		os.Exit(1)
	}
	defer f.Close()
	if _, err := fmt.Fprintf(f, "%s %d\n", in.PromptID, at.UnixNano()); err != nil {
		fmt.Fprintln(os.Stderr, "stamphook:", err)
	}
}
