package config

import (
	"errors"
	"io/fs"
	"net"
	"net/netip"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Web is the [web] table: the read-only web view of sessions the daemon
// serves. Links are its only way in, so where they can be read from
// (the listen address, TLS, public_url) is what the checks below guard.
type Web struct {
	// Listen is the host:port the view is served on, or WebOff. Default:
	// DefaultWebListen, this machine only.
	Listen string `toml:"listen"`
	// PublicURL is the root links are built on when a reverse proxy or a
	// tunnel sits in front (it may carry a path prefix); empty: the
	// listen address.
	PublicURL string `toml:"public_url"`
	// TLSCert and TLSKey are PEM files; both set: the view is served
	// over TLS.
	TLSCert string `toml:"tls_cert"`
	TLSKey  string `toml:"tls_key"`
	// LinkTTL is how long a link works after it was made.
	LinkTTL Duration `toml:"link_ttl"`
}

// Web view defaults and bounds.
const (
	DefaultWebListen = "127.0.0.1:7878"
	// WebOff as listen turns the web view off. (An empty listen is the
	// default address, as every empty key is its default.)
	WebOff         = "off"
	DefaultLinkTTL = 24 * time.Hour
	minLinkTTL     = time.Minute
	// maxLinkTTL bounds a link's life: one that never expires is a
	// password posted in a chat.
	maxLinkTTL = 30 * 24 * time.Hour
)

// Enabled reports whether the web view is served.
func (w Web) Enabled() bool { return w.Listen != WebOff }

// TLS reports whether the view is served over TLS.
func (w Web) TLS() bool { return w.TLSCert != "" && w.TLSKey != "" }

// Loopback reports whether only this machine can reach the view: listen's
// host is localhost or a loopback address. False when the view is off, or
// listen does not parse.
func (w Web) Loopback() bool {
	if !w.Enabled() {
		return false
	}
	host, _, err := net.SplitHostPort(w.Listen)
	if err != nil {
		return false
	}
	return loopbackHost(host)
}

// URL is the root links are built on: public_url, else the listen
// address.
func (w Web) URL() string {
	if w.PublicURL != "" {
		return w.PublicURL
	}
	if w.TLS() {
		return "https://" + w.Listen
	}
	return "http://" + w.Listen
}

func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}

func (w *Web) applyDefaults() {
	if w.Listen == "" {
		w.Listen = DefaultWebListen
	}
	if w.LinkTTL.Duration == 0 {
		w.LinkTTL.Duration = DefaultLinkTTL
	}
	w.PublicURL = strings.TrimRight(w.PublicURL, "/")
}

// hostName is a DNS name (a tailnet or LAN name). Compiled for the first
// listen address that is not an IP: its {0,61}s make a large program.
var hostName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$`)
})

func (w Web) check(v *checker) {
	if d := w.LinkTTL.Duration; d < minLinkTTL || d > maxLinkTTL {
		v.errf("web.link_ttl", "%s must be between 1m and 720h (30 days): how long a link ccbridge posts keeps working", d)
	}
	if !w.Enabled() {
		return // what serving would need is not needed
	}
	w.checkListen(v)
	w.checkPublicURL(v)
	switch {
	case w.TLSCert == "" && w.TLSKey == "":
	case w.TLSCert == "":
		v.errf("web.tls_cert", "missing; set both tls_cert and tls_key, or neither")
	case w.TLSKey == "":
		v.errf("web.tls_key", "missing; set both tls_cert and tls_key, or neither")
	default:
		v.readable("web.tls_cert", w.TLSCert, false)
		v.readable("web.tls_key", w.TLSKey, true)
	}
}

func (w Web) checkListen(v *checker) {
	host, port, err := net.SplitHostPort(w.Listen)
	n, perr := strconv.Atoi(port)
	if err != nil || perr != nil {
		v.errf("web.listen", "%q must be host:port such as %q, or %q to turn the web view off", w.Listen, DefaultWebListen, WebOff)
		return
	}
	if n < 1 || n > 65535 {
		v.errf("web.listen", "port %d must be between 1 and 65535", n)
	}
	addr, ipErr := netip.ParseAddr(host)
	if host != "" && ipErr != nil && !hostName().MatchString(host) {
		v.errf("web.listen", "%q is not an IP address or host name", host)
		return
	}
	if !w.Loopback() && !w.TLS() {
		v.warnf("web.listen", "%s is reachable from other machines without TLS: anyone on the network between can read the pages and the links "+
			"(a link opens a session's transcript, diff and files until it expires); set tls_cert and tls_key, or listen on %s behind a TLS proxy or tunnel",
			w.Listen, DefaultWebListen)
	}
	if w.PublicURL == "" && (host == "" || (ipErr == nil && addr.IsUnspecified())) {
		v.warnf("web.public_url", "links would point at %s, which is no address another machine can open; set public_url to the address a phone reaches this machine at", w.Listen)
	}
}

func (w Web) checkPublicURL(v *checker) {
	if w.PublicURL == "" {
		return
	}
	u, err := url.Parse(w.PublicURL)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "":
		v.errf("web.public_url", "%q must be an http(s) URL such as https://ccbridge.example.com", w.PublicURL)
	case u.User != nil:
		v.errf("web.public_url", "must not hold a user name or password: every link ccbridge posts would show it")
	case u.RawQuery != "" || u.ForceQuery || strings.Contains(w.PublicURL, "#"):
		v.errf("web.public_url", "must not have a query or a fragment: links are built by adding a path to it")
	case !plainPath(u):
		v.errf("web.public_url", "the path %q must be plain: no \".\" or \"..\" segments, no empty ones, no backslash, no %%-escapes", u.EscapedPath())
	case u.Scheme == "http" && !loopbackHost(u.Hostname()):
		v.warnf("web.public_url", "links to %s travel unencrypted: anyone on the way can read them and open the pages; use https", w.PublicURL)
	}
}

// plainPath reports whether a URL's path prefix is one a proxy forwards as
// written: links append to it, so a segment that a browser or a proxy
// would resolve or decode could point them elsewhere.
func plainPath(u *url.URL) bool {
	if u.Path == "" {
		return true
	}
	if strings.ContainsAny(u.EscapedPath(), `%\`) || strings.Contains(u.Path, `\`) {
		return false
	}
	for _, seg := range strings.Split(strings.TrimPrefix(u.Path, "/"), "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// readable checks that a file named by key exists and can be read now
// (the daemon reads it at start); a secret one must not be readable by
// others.
func (v *checker) readable(key, val string, secret bool) {
	p, ok := v.absPath(key, val)
	if !ok {
		return
	}
	fi, err := os.Stat(p)
	if err == nil && !fi.Mode().IsRegular() {
		v.errf(key, "%s is not a file", p)
		return
	}
	if err == nil {
		var f *os.File
		if f, err = os.Open(p); err == nil {
			f.Close()
		}
	}
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		v.errf(key, "cannot read %s: %v", p, err)
		return
	}
	if secret && fi.Mode().Perm()&0o077 != 0 {
		v.warnf(key, "%s is readable by others (mode %o); chmod 600 it", p, fi.Mode().Perm())
	}
}
