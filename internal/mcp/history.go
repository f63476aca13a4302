package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ccbridge/ccbridge/internal/claudehook"
)

// Reading history: only each transcript's head, bounded, whatever its size.
const (
	headBytes    = 64 << 10
	defaultLimit = 20
	promptShown  = 200
)

// entry is one session of Claude Code's history.
type entry struct {
	ListEntry
	path string
}

// history finds one session's transcript by id.
func (s *Server) history(sid string) (entry, bool) {
	if sid == "" || safeID(sid) != sid {
		return entry{}, false
	}
	matches, _ := filepath.Glob(filepath.Join(s.opt.ClaudeHome, "projects", "*", sid+".jsonl"))
	if len(matches) == 0 {
		return entry{}, false
	}
	e, ok := readHead(matches[0])
	return e, ok
}

// readHead reads a transcript's first lines: the directory and the first
// prompt a person typed.
func readHead(path string) (entry, bool) {
	f, err := os.Open(path)
	if err != nil {
		return entry{}, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return entry{}, false
	}
	e := entry{path: path, ListEntry: ListEntry{SessionID: strings.TrimSuffix(filepath.Base(path), ".jsonl"), Time: fi.ModTime().UTC()}}
	sc := bufio.NewScanner(io.LimitReader(f, headBytes))
	sc.Buffer(make([]byte, 0, 64<<10), headBytes)
	for sc.Scan() && (e.WorkingDirectory == "" || e.FirstPrompt == "") {
		var line struct {
			claudehook.Entry
			Cwd    string `json:"cwd"`
			IsMeta bool   `json:"isMeta"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		if e.WorkingDirectory == "" && line.Cwd != "" {
			e.WorkingDirectory = line.Cwd
		}
		if e.FirstPrompt != "" || line.Type != "user" || line.IsMeta || line.IsSidechain {
			continue
		}
		for _, b := range line.Blocks() {
			if t := strings.TrimSpace(b.Text); b.Type == "text" && t != "" && !strings.HasPrefix(t, "<") && !strings.HasPrefix(t, "[Request interrupted") {
				if r := []rune(t); len(r) > promptShown {
					t = string(r[:promptShown-1]) + "…"
				}
				e.FirstPrompt = t
				break
			}
		}
	}
	return e, true
}

func (s *Server) list(ctx context.Context, _ *sdk.CallToolRequest, in ListInput) (*sdk.CallToolResult, ListOutput, error) {
	limit := in.Limit
	if limit <= 0 {
		limit = defaultLimit
	}
	want := ""
	if in.WorkingDirectory != "" {
		want = filepath.Clean(in.WorkingDirectory)
	}
	paths, _ := filepath.Glob(filepath.Join(s.opt.ClaudeHome, "projects", "*", "*.jsonl"))
	type file struct {
		path string
		mod  int64
	}
	var files []file
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			files = append(files, file{p, fi.ModTime().UnixNano()})
		}
	}
	slices.SortFunc(files, func(a, b file) int {
		switch {
		case a.mod > b.mod:
			return -1
		case a.mod < b.mod:
			return 1
		}
		return strings.Compare(a.path, b.path)
	})
	out := ListOutput{Sessions: []ListEntry{}}
	for _, f := range files {
		if len(out.Sessions) == limit {
			break
		}
		e, ok := readHead(f.path)
		if !ok || (want != "" && filepath.Clean(e.WorkingDirectory) != want) {
			continue
		}
		if key, _, found := s.find(ctx, e.SessionID); found {
			st := s.state(ctx, key, e.SessionID)
			e.IsActive = st.IsActive
			if e.IsActive {
				e.Status = st.Status
			}
		}
		out.Sessions = append(out.Sessions, e.ListEntry)
	}
	return nil, out, nil
}

// readActivity reads a transcript's recent activity.
func readActivity(path string, lines int) (claudehook.Activity, error) {
	return claudehook.Recent(path, lines)
}
