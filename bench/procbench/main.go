// Command procbench times whole hook processes the way Claude Code runs
// them (fork, exec, JSON on stdin, wait) on their common paths, and reports
// wall time and peak RSS. It is the Go counterpart of the anchor peer's
// bench.py, so the figures compare directly (BENCHMARKS.md).
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/state"
)

type benchCase struct {
	name    string
	bin     string
	payload string
	env     []string
	args    []string
	// vary, when set, gives run i its own payload (new figures each time).
	vary func(i int) string
	// prints: the case writes a line on stdout (the statusLine).
	prints bool
}

func main() {
	n := flag.Int("n", 30, "runs per case")
	warmup := flag.Int("warmup", 3, "warm-up runs per case")
	bin := flag.String("bin", "bin", "directory holding the built binaries")
	flag.Parse()
	if err := run(*n, *warmup, *bin); err != nil {
		fmt.Fprintln(os.Stderr, "procbench:", err)
		os.Exit(1)
	}
}

func run(n, warmup int, bin string) error {
	bin, _ = filepath.Abs(bin)
	work, err := os.MkdirTemp("", "procbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	rt := filepath.Join(work, "rt")
	store, err := state.OpenStore(rt)
	if err != nil {
		return err
	}
	// A 10 MiB transcript, as in a long session.
	transcript := filepath.Join(work, "transcript.jsonl")
	var tx bytes.Buffer
	for i := 0; tx.Len() < 10<<20; i++ {
		fmt.Fprintf(&tx, `{"type":"assistant","isSidechain":false,"apiBlockIndex":0,"message":{"id":"m%d","stop_reason":"end_turn","content":[{"type":"text","text":"%s"}]}}`+"\n", i, strings.Repeat("x", 400))
	}
	tx.WriteString(`{"type":"assistant","isSidechain":false,"apiBlockIndex":0,"message":{"id":"final","stop_reason":"end_turn","content":[{"type":"text","text":"done"}]}}` + "\n")
	// The tool calls the PreToolUse cases are about: one after text already
	// posted as progress, one with no text before it.
	tx.WriteString(`{"type":"assistant","isSidechain":false,"apiBlockIndex":0,"message":{"id":"m_tool","stop_reason":"tool_use","content":[{"type":"text","text":"Let me look."}]}}` + "\n")
	tx.WriteString(`{"type":"assistant","isSidechain":false,"apiBlockIndex":1,"message":{"id":"m_tool","stop_reason":"tool_use","content":[{"type":"tool_use","id":"toolu_seen","name":"Read","input":{}}]}}` + "\n")
	tx.WriteString(`{"type":"assistant","isSidechain":false,"apiBlockIndex":0,"message":{"id":"m_bare","stop_reason":"tool_use","content":[{"type":"tool_use","id":"toolu_bare","name":"Read","input":{}}]}}` + "\n")
	if err := os.WriteFile(transcript, tx.Bytes(), 0o600); err != nil {
		return err
	}
	ctx := context.Background()
	if _, err := store.Turns.Create(ctx, state.TurnKey("sid-bench", "pid-dup"), state.Turn{Reply: "done"}); err != nil {
		return err
	}
	if _, err := store.Seen.Create(ctx, state.TurnKey("sid-bench", "m_tool-0"), state.Seen{}); err != nil {
		return err
	}
	if _, err := store.Sessions.Update(ctx, "bench", func(s *state.Session) error { s.Server, s.ChannelID, s.Progress = "home", "1", "text"; return nil }); err != nil {
		return err
	}
	stop := func(prompt string) string {
		return fmt.Sprintf(`{"session_id":"sid-bench","prompt_id":"%s","transcript_path":"%s","cwd":"/srv/bench/home/proj","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"done","background_tasks":[],"session_crons":[]}`, prompt, transcript)
	}
	pre := func(toolUseID string) string {
		return fmt.Sprintf(`{"session_id":"sid-bench","prompt_id":"p","transcript_path":"%s","cwd":"/srv/bench/home/proj","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/srv/bench/home/proj/a.go"},"tool_use_id":"%s"}`, transcript, toolUseID)
	}
	// Claude runs the statusLine after every assistant message.
	status := func(i int) string {
		return fmt.Sprintf(`{"session_id":"sid-bench","prompt_id":"p","cwd":"%[1]s","model":{"id":"claude-opus-5-5","display_name":"Opus 5.5"},"workspace":{"current_dir":"%[1]s","project_dir":"%[1]s"},"cost":{"total_cost_usd":%[2]d.25,"total_lines_added":5,"total_lines_removed":0},"context_window":{"context_window_size":1000000,"current_usage":{"input_tokens":1200,"output_tokens":40,"cache_creation_input_tokens":0,"cache_read_input_tokens":3000},"used_percentage":0}}`, work, i)
	}
	base := []string{"PATH=" + os.Getenv("PATH"), state.EnvRuntimeDir + "=" + rt}
	withSession := append(slices.Clone(base), state.EnvSession+"=bench")
	stopBin, preBin := filepath.Join(bin, "ccbridge-hook-stop"), filepath.Join(bin, "ccbridge-hook-pretool")
	cases := []benchCase{
		{"floor: /bin/true", "/bin/true", "{}", base, nil, nil, false},
		{"hook-stop: duplicate Stop (nothing to post)", stopBin, stop("pid-dup"), withSession, nil, nil, false},
		{"hook-stop: Stop of a session ccbridge did not start", stopBin, stop("pid-other"), base, nil, nil, false},
		{"hook-pretool: PreToolUse, 10 MiB transcript, text already posted", preBin, pre("toolu_seen"), withSession, nil, nil, false},
		{"hook-pretool: PreToolUse, 10 MiB transcript, no text before the call", preBin, pre("toolu_bare"), withSession, nil, nil, false},
		{"hook-pretool: PreToolUse, no ccbridge session", preBin, pre("toolu_seen"), base, nil, nil, false},
		{"hook-stop statusline: figures unchanged", stopBin, status(1), withSession, []string{"statusline"}, nil, true},
		{"hook-stop statusline: new figures (record written)", stopBin, "", withSession, []string{"statusline"}, status, true},
		// What Claude waits for at the end of each turn: the reply's place
		// taken and the run that posts it started. Last: those runs go on
		// after the hook (they queue the reply: no daemon here).
		{"hook-stop: Stop, reply detached", stopBin, "", withSession, nil, func(i int) string { return stop(fmt.Sprintf("pid-new-%d", i)) }, false},
	}
	fmt.Printf("%d runs per case after %d warm-ups; wall = fork to reap\n\n", n, warmup)
	fmt.Printf("| case | wall median | wall p95 | peak RSS max |\n|---|---:|---:|---:|\n")
	for _, c := range cases {
		var walls []time.Duration
		var rss int64
		for i := range warmup + n {
			if c.vary != nil {
				c.payload = c.vary(2 + i)
			}
			w, r, err := once(c)
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			if i >= warmup {
				walls = append(walls, w)
				rss = max(rss, r)
			}
		}
		slices.Sort(walls)
		fmt.Printf("| %s | %.2f ms | %.2f ms | %.1f MiB |\n", c.name, ms(walls[len(walls)/2]), ms(walls[len(walls)*95/100]), float64(rss)/1024)
	}
	return nil
}

// once runs the case twice: directly for wall time, and under
// /usr/bin/time for peak RSS. A child spawned by Go (or Python) shares the
// parent's address space until exec (CLONE_VM), and Linux then reports the
// parent's high-water mark as the child's ru_maxrss; time(1) fork()s a copy
// of its own small image, so its %M is the hook's own peak.
func once(c benchCase) (time.Duration, int64, error) {
	cmd := exec.Command(c.bin, c.args...)
	cmd.Stdin = strings.NewReader(c.payload)
	cmd.Env = c.env
	var out bytes.Buffer
	cmd.Stdout = &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, 0, err
	}
	wall := time.Since(start)
	if out.Len() > 0 && !c.prints {
		return 0, 0, fmt.Errorf("unexpected stdout %q", out.String())
	}
	rssFile, err := os.CreateTemp("", "procbench-rss")
	if err != nil {
		return 0, 0, err
	}
	defer os.Remove(rssFile.Name())
	rssFile.Close()
	timed := exec.Command("/usr/bin/time", append([]string{"-f", "%M", "-o", rssFile.Name(), c.bin}, c.args...)...)
	timed.Stdin = strings.NewReader(c.payload)
	timed.Env = c.env
	if err := timed.Run(); err != nil {
		return 0, 0, fmt.Errorf("/usr/bin/time (apt-get install time): %w", err)
	}
	b, _ := os.ReadFile(rssFile.Name())
	var kib int64
	if _, err := fmt.Sscan(strings.TrimSpace(string(b)), &kib); err != nil {
		return 0, 0, fmt.Errorf("parse /usr/bin/time output %q: %w", b, err)
	}
	return wall, kib, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
