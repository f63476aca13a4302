package web

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"strconv"
	"time"
)

// diffTimeout bounds the git work behind the Diff page.
const diffTimeout = 30 * time.Second

func (h *Handler) serveSession(w http.ResponseWriter, r *http.Request, s Session, pg page) {
	pg.Page = "session"
	data := struct {
		page
		Items           []item
		End             int64
		Earlier, Before string
		Missing         bool
		Skipped         string
		Figures         string
		Cards           []cardView
	}{page: pg}
	before := int64(-1)
	if b, err := strconv.ParseInt(r.URL.Query().Get("before"), 10, 64); err == nil && b >= 0 {
		before, data.Before = b, strconv.FormatInt(b, 10)
	} else {
		// The cards and the figures are the session's as it stands: the
		// latest page's, not an earlier one's.
		data.Figures, data.Cards = h.opt.Redact(s.Figures), cardViews(s.Cards, h.opt.Redact)
	}
	if s.Transcript == "" {
		data.Missing = true
		h.render(w, "session", data)
		return
	}
	// Claude Code writes lines the page does not show (prompt snapshots,
	// request shapes: tens of KiB a turn), so a window that shows too
	// little is widened, up to maxPageBytes.
	var c chunk
	var err error
	for size := int64(pageBytes); ; size *= 2 {
		c, err = readBefore(s.Transcript, before, size)
		if err == nil {
			data.Items = pageItems(c.lines, h.opt.Redact)
		}
		if err != nil || len(data.Items) >= minPageItems || c.start == 0 || size >= maxPageBytes {
			break
		}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		data.Missing = true
	case err != nil:
		h.log.Warn("web: read transcript", "session", s.Key, "err", err)
		http.Error(w, "could not read the transcript", http.StatusInternalServerError)
		return
	}
	if c.skipped > 0 {
		data.Skipped = size(c.skipped)
	}
	data.End = c.end
	if c.start > 0 {
		data.Earlier = strconv.FormatInt(c.start, 10)
	}
	if before >= 0 {
		// An earlier page is not followed live: its end is not the file's.
		data.End = -1
	}
	h.render(w, "session", data)
}

func (h *Handler) serveDiff(w http.ResponseWriter, r *http.Request, s Session, pg page) {
	pg.Page = "diff"
	data := struct {
		page
		Files       []diffFile
		Head, Merge string
		Uncommitted bool
		Split       bool
		Err         string
	}{page: pg, Split: r.URL.Query().Get("view") == "split"}
	if h.opt.Diffs == nil {
		data.Err = "The diff is not available here."
		h.render(w, "diff", data)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), diffTimeout)
	defer cancel()
	d, err := h.opt.Diffs.Diff(ctx, s)
	if err != nil {
		h.log.Warn("web: diff", "session", s.Key, "err", err)
		data.Err = "Could not compute the diff: " + h.opt.Redact(err.Error())
		h.render(w, "diff", data)
		return
	}
	data.Head, data.Merge, data.Uncommitted = short(d.Head), short(d.Merge), d.Uncommitted
	data.Files = parsePatch(h.opt.Redact(d.Patch))
	renderDiff(data.Files)
	if data.Split {
		for i := range data.Files {
			data.Files[i].Rows = splitRows(data.Files[i].Lines)
		}
	}
	h.render(w, "diff", data)
}

// short is a commit id as /diff shows it.
func short(commit string) string { return commit[:min(len(commit), 12)] }
