package web

import (
	"html/template"
	"strconv"
	"strings"
)

// Limits of the diff page: a file with more changed lines than foldLines
// starts folded; past maxFileLines a file's lines are not shown, and past
// maxDiffLines no further file's are (the stat still names every file).
const (
	foldLines    = 400
	maxFileLines = 5000
	maxDiffLines = 20000
)

type diffLine struct {
	Kind         string // add, del, ctx, hunk, note
	Old, New     string // line numbers, "" where the side has none
	HTML         template.HTML
	content      string
	oldNo, newNo int
}

type diffFile struct {
	Name       string
	From       string // the old name of a renamed file
	Status     string // added, deleted, renamed, modified
	Binary     bool
	Add, Del   int
	Lines      []diffLine
	Folded     bool
	Hidden     bool // too many lines to show
	ShownLines int
	Rows       []splitRow // the side-by-side view's, when asked for
}

// parsePatch splits a git patch into its files. Names come from the
// "+++ b/" and "--- a/" lines, else from rename lines, else from the
// "diff --git" line (a file whose content did not change).
func parsePatch(patch string) []diffFile {
	var files []diffFile
	var f *diffFile
	inHunk := false
	oldNo, newNo := 0, 0
	for line := range strings.SplitSeq(patch, "\n") {
		if strings.HasPrefix(line, "diff --git ") {
			files = append(files, diffFile{Status: "modified", Name: gitLineName(line)})
			f, inHunk = &files[len(files)-1], false
			continue
		}
		if f == nil {
			continue
		}
		if !inHunk {
			switch {
			case strings.HasPrefix(line, "new file mode"):
				f.Status = "added"
			case strings.HasPrefix(line, "deleted file mode"):
				f.Status = "deleted"
			case strings.HasPrefix(line, "rename from "):
				f.Status, f.From = "renamed", strings.TrimPrefix(line, "rename from ")
			case strings.HasPrefix(line, "rename to "):
				f.Name = strings.TrimPrefix(line, "rename to ")
			case strings.HasPrefix(line, "+++ b/"):
				f.Name = strings.TrimPrefix(line, "+++ b/")
			case strings.HasPrefix(line, "--- a/") && f.Status == "deleted":
				f.Name = strings.TrimPrefix(line, "--- a/")
			case strings.HasPrefix(line, "Binary files ") || line == "GIT binary patch":
				f.Binary = true
			}
		}
		if strings.HasPrefix(line, "@@") {
			inHunk = true
			oldNo, newNo = hunkStart(line)
			f.Lines = append(f.Lines, diffLine{Kind: "hunk", content: line})
			continue
		}
		if !inHunk || line == "" {
			continue
		}
		switch line[0] {
		case '+':
			f.Add++
			f.Lines = append(f.Lines, diffLine{Kind: "add", content: line[1:], newNo: newNo})
			newNo++
		case '-':
			f.Del++
			f.Lines = append(f.Lines, diffLine{Kind: "del", content: line[1:], oldNo: oldNo})
			oldNo++
		case ' ':
			f.Lines = append(f.Lines, diffLine{Kind: "ctx", content: line[1:], oldNo: oldNo, newNo: newNo})
			oldNo++
			newNo++
		case '\\':
			f.Lines = append(f.Lines, diffLine{Kind: "note", content: line})
		default:
			inHunk = false // a header line of the next file part
		}
	}
	return files
}

// gitLineName takes b/'s name from "diff --git a/x b/x" (both halves are
// the same name when the file was not renamed).
func gitLineName(line string) string {
	rest := strings.TrimPrefix(line, "diff --git ")
	if n := len(rest); n%2 == 1 && strings.HasPrefix(rest, "a/") {
		half := (n - 1) / 2
		if a, b := rest[:half], rest[half+1:]; strings.HasPrefix(b, "b/") && a[2:] == b[2:] {
			return b[2:]
		}
	}
	if i := strings.LastIndex(rest, " b/"); i >= 0 {
		return rest[i+3:]
	}
	return rest
}

// hunkStart reads "@@ -o[,n] +n[,m] @@".
func hunkStart(line string) (oldNo, newNo int) {
	fields := strings.Fields(line)
	if len(fields) < 3 {
		return 0, 0
	}
	num := func(s string) int {
		s, _, _ = strings.Cut(s[1:], ",")
		n, _ := strconv.Atoi(s)
		return n
	}
	return num(fields[1]), num(fields[2])
}

// renderDiff highlights each file's lines (the hunks' text as one run, so
// a token spanning lines keeps its colour) within the page's limits.
func renderDiff(files []diffFile) {
	budget := maxDiffLines
	for i := range files {
		f := &files[i]
		f.Folded = f.Add+f.Del > foldLines
		if f.Binary || len(f.Lines) > maxFileLines || len(f.Lines) > budget {
			f.Hidden = !f.Binary && len(f.Lines) > 0
			f.ShownLines, f.Lines = len(f.Lines), nil
			continue
		}
		budget -= len(f.Lines)
		var text strings.Builder
		for _, l := range f.Lines {
			if l.Kind != "hunk" && l.Kind != "note" {
				text.WriteString(l.content + "\n")
			}
		}
		hl := highlightLines(f.Name, text.String())
		j := 0
		for k := range f.Lines {
			l := &f.Lines[k]
			if l.oldNo > 0 {
				l.Old = strconv.Itoa(l.oldNo)
			}
			if l.newNo > 0 {
				l.New = strconv.Itoa(l.newNo)
			}
			if l.Kind == "hunk" || l.Kind == "note" {
				l.HTML = plainLines(l.content)[0]
				continue
			}
			if j < len(hl) {
				l.HTML = hl[j]
			}
			j++
		}
	}
}

// splitRow is a row of the side-by-side view: a removed line beside the
// line added in its place, a context line on both sides, or a hunk header
// or note across the row.
type splitRow struct {
	L, R *diffLine
	Full *diffLine
}

// splitRows pairs each run of removed lines with the run of added lines
// that follows it, row by row.
func splitRows(lines []diffLine) []splitRow {
	var rows []splitRow
	for i := 0; i < len(lines); {
		l := &lines[i]
		switch l.Kind {
		case "ctx":
			rows = append(rows, splitRow{L: l, R: l})
			i++
		case "del", "add":
			var dels, adds []*diffLine
			for ; i < len(lines) && lines[i].Kind == "del"; i++ {
				dels = append(dels, &lines[i])
			}
			for ; i < len(lines) && lines[i].Kind == "add"; i++ {
				adds = append(adds, &lines[i])
			}
			for j := range max(len(dels), len(adds)) {
				var r splitRow
				if j < len(dels) {
					r.L = dels[j]
				}
				if j < len(adds) {
					r.R = adds[j]
				}
				rows = append(rows, r)
			}
		default:
			rows = append(rows, splitRow{Full: l})
			i++
		}
	}
	return rows
}
