package web

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Server serves a Handler on its listen address. Start reports an address
// in use as an error and never panics: the daemon runs on without the web
// view.
type Server struct {
	h      *Handler
	srv    *http.Server
	ln     net.Listener
	cancel context.CancelFunc // ends live streams on Close
}

// NewServer returns a server for h on h's Listen, TLS and logger options.
func NewServer(h *Handler) *Server {
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{h: h, cancel: cancel, srv: &http.Server{
		BaseContext:       func(net.Listener) context.Context { return ctx },
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    16 << 10,
		// No WriteTimeout: the live stream is long-lived by design.
		ErrorLog: slog.NewLogLogger(h.log.Handler(), slog.LevelDebug),
	}}
}

// Start listens and serves in the background. The links made afterwards
// name the bound address (a port of 0 is resolved) unless PublicURL is set.
func (s *Server) Start() error {
	var cfg *tls.Config
	if s.h.opt.TLSCert != "" && s.h.opt.TLSKey != "" {
		// Loaded here, not in the serving goroutine, so a bad pair is
		// Start's error rather than a log line.
		cert, err := tls.LoadX509KeyPair(s.h.opt.TLSCert, s.h.opt.TLSKey)
		if err != nil {
			return fmt.Errorf("load tls_cert and tls_key: %w", err)
		}
		cfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}}
	}
	ln, err := net.Listen("tcp", s.h.opt.Listen)
	if err != nil {
		return fmt.Errorf("web view: listen on %s: %w", s.h.opt.Listen, err)
	}
	s.ln = ln
	addr := ln.Addr().String()
	s.h.base.Store(&addr)
	if cfg != nil {
		ln = tls.NewListener(ln, cfg)
	}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.h.log.Error("web: serve", "addr", addr, "err", err)
		}
	}()
	return nil
}

// Addr is the bound address ("" before Start).
func (s *Server) Addr() string {
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// Close stops the server, ending live streams.
func (s *Server) Close() error {
	s.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		return s.srv.Close()
	}
	return nil
}
