package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func parseWeb(t *testing.T, web string) *Config {
	t.Helper()
	t.Setenv("CCBRIDGE_TEST_TOKEN", "tok-0123456789")
	c, err := Parse("[web]\n" + web + "\n" + strings.ReplaceAll(validTOML, "%s", t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The web view is on by default, on loopback, with day-long links.
func TestWebDefaults(t *testing.T) {
	c := parseValid(t)
	w := c.Web
	if w.Listen != DefaultWebListen || w.LinkTTL.Duration != 24*time.Hour || !w.Enabled() || !w.Loopback() || w.TLS() {
		t.Fatalf("defaults: %+v enabled %v loopback %v tls %v", w, w.Enabled(), w.Loopback(), w.TLS())
	}
	if ps := c.Check(); len(ps) != 0 {
		t.Errorf("default web view has problems: %v", ps)
	}
	off := parseWeb(t, `listen = "off"`)
	if off.Web.Enabled() || off.Web.Loopback() {
		t.Errorf("off: enabled %v loopback %v", off.Web.Enabled(), off.Web.Loopback())
	}
	if ps := off.Check(); len(ps) != 0 {
		t.Errorf("web off has problems: %v", ps)
	}
}

func TestWebLoopback(t *testing.T) {
	for listen, want := range map[string]bool{
		"127.0.0.1:7878":          true,
		"127.0.0.2:7878":          true,
		"localhost:7878":          true,
		"[::1]:7878":              true,
		"0.0.0.0:7878":            false,
		":7878":                   false,
		"[::]:7878":               false,
		"192.168.1.5:7878":        false,
		"box.tail1234.ts.net:443": false,
		"off":                     false,
	} {
		if got := (Web{Listen: listen}).Loopback(); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", listen, got, want)
		}
	}
}

func TestWebProblems(t *testing.T) {
	dir := t.TempDir()
	cert := filepath.Join(dir, "cert.pem")
	key := filepath.Join(dir, "key.pem")
	open := filepath.Join(dir, "open-key.pem")
	for f, mode := range map[string]os.FileMode{cert: 0o644, key: 0o600, open: 0o644} {
		if err := os.WriteFile(f, []byte("pem"), mode); err != nil {
			t.Fatal(err)
		}
	}
	tls := "tls_cert = \"" + cert + "\"\ntls_key = \"" + key + "\"\n"
	cases := []struct {
		name, web, want string
		warning         bool
	}{
		{name: "no port", web: `listen = "127.0.0.1"`,
			want: `web.listen: "127.0.0.1" must be host:port such as "127.0.0.1:7878", or "off"`},
		{name: "named port", web: `listen = "127.0.0.1:http"`, want: `web.listen: "127.0.0.1:http" must be host:port`},
		{name: "port zero", web: `listen = "127.0.0.1:0"`, want: "web.listen: port 0 must be between 1 and 65535"},
		{name: "port too big", web: `listen = "127.0.0.1:70000"`, want: "web.listen: port 70000 must be between 1 and 65535"},
		{name: "bad host", web: `listen = "my box:7878"`, want: `web.listen: "my box" is not an IP address or host name`},
		{name: "LAN without TLS", web: `listen = "192.168.1.5:7878"`, warning: true,
			want: "web.listen: 192.168.1.5:7878 is reachable from other machines without TLS"},
		{name: "all interfaces without TLS", web: `listen = ":7878"`, warning: true,
			want: "web.listen: :7878 is reachable from other machines without TLS"},
		{name: "all interfaces without public_url", web: "listen = \"0.0.0.0:7878\"\n" + tls, warning: true,
			want: "web.public_url: links would point at 0.0.0.0:7878, which is no address another machine can open; set public_url"},
		{name: "public_url scheme", web: `public_url = "ftp://example.com"`,
			want: `web.public_url: "ftp://example.com" must be an http(s) URL such as https://ccbridge.example.com`},
		{name: "public_url no scheme", web: `public_url = "example.com"`, want: `web.public_url: "example.com" must be an http(s) URL`},
		{name: "public_url credentials", web: `public_url = "https://me:pw@example.com"`,
			want: "web.public_url: must not hold a user name or password"},
		{name: "public_url dot-dot", web: `public_url = "https://example.com/a/../b"`,
			want: `web.public_url: the path "/a/../b" must be plain: no "." or ".." segments, no empty ones, no backslash`},
		{name: "public_url encoded dot-dot", web: `public_url = "https://example.com/%2e%2e/b"`, want: "web.public_url: the path"},
		{name: "public_url double slash", web: `public_url = "https://example.com//evil.com"`, want: "web.public_url: the path"},
		{name: "public_url backslash", web: `public_url = "https://example.com/a\\b"`, want: "web.public_url: the path"},
		{name: "public_url query", web: `public_url = "https://example.com/?next=x"`, want: "web.public_url: must not have a query or a fragment"},
		{name: "public_url fragment", web: `public_url = "https://example.com/#x"`, want: "web.public_url: must not have a query or a fragment"},
		{name: "public_url in clear", web: `public_url = "http://box.lan:7878"`, warning: true,
			want: "web.public_url: links to http://box.lan:7878 travel unencrypted"},
		{name: "cert without key", web: "tls_cert = \"" + cert + "\"",
			want: "web.tls_key: missing; set both tls_cert and tls_key, or neither"},
		{name: "key without cert", web: "tls_key = \"" + key + "\"",
			want: "web.tls_cert: missing; set both tls_cert and tls_key, or neither"},
		{name: "cert missing", web: "tls_cert = \"" + dir + "/none.pem\"\ntls_key = \"" + key + "\"",
			want: "web.tls_cert: cannot read " + dir + "/none.pem"},
		{name: "cert a directory", web: "tls_cert = \"" + dir + "\"\ntls_key = \"" + key + "\"",
			want: "web.tls_cert: " + dir + " is not a file"},
		{name: "cert relative", web: "tls_cert = \"cert.pem\"\ntls_key = \"" + key + "\"",
			want: `web.tls_cert: "cert.pem" must be an absolute path or start with ~/`},
		{name: "key readable by others", web: "tls_cert = \"" + cert + "\"\ntls_key = \"" + open + "\"", warning: true,
			want: "web.tls_key: " + open + " is readable by others (mode 644); chmod 600 it"},
		{name: "ttl too short", web: `link_ttl = "30s"`, want: "web.link_ttl: 30s must be between 1m and 720h"},
		{name: "ttl too long", web: `link_ttl = "1000h"`, want: "web.link_ttl: 1000h0m0s must be between 1m and 720h"},
	}
	if os.Geteuid() != 0 { // root reads any file
		unreadable := filepath.Join(dir, "unreadable.pem")
		if err := os.WriteFile(unreadable, []byte("pem"), 0o000); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct {
			name, web, want string
			warning         bool
		}{name: "key unreadable", web: "tls_cert = \"" + cert + "\"\ntls_key = \"" + unreadable + "\"",
			want: "web.tls_key: cannot read " + unreadable})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ps := parseWeb(t, tc.web).Check()
			assertProblem(t, ps, tc.want, tc.warning)
		})
	}
	// What is right raises nothing: TLS on a LAN address, a proxy's URL
	// with a path, link_ttl at its bounds.
	for _, ok := range []string{
		"listen = \"0.0.0.0:7878\"\npublic_url = \"https://box.example.com:7878\"\n" + tls,
		`public_url = "https://ccbridge.example.com/bridge/"`,
		`public_url = "http://127.0.0.1:7878"`,
		`link_ttl = "1m"`,
		`link_ttl = "720h"`,
		`listen = "[::1]:7878"`,
		`listen = "box.tail1234.ts.net:7878"` + "\n" + tls,
	} {
		if ps := parseWeb(t, ok).Check(); len(ps) != 0 {
			t.Errorf("%q: %v", ok, ps)
		}
	}
	if c := parseWeb(t, `public_url = "https://ccbridge.example.com/bridge/"`); c.Web.PublicURL != "https://ccbridge.example.com/bridge" {
		t.Errorf("public_url = %q, want the trailing slash trimmed", c.Web.PublicURL)
	}
}

func TestSummaryWeb(t *testing.T) {
	for web, want := range map[string]string{
		"":                 "web:         http://127.0.0.1:7878 (this machine only), links valid 24h0m0s\n",
		`listen = "off"`:   "web:         off\n",
		`link_ttl = "2h"`:  "links valid 2h0m0s",
		`listen = ":7878"`: "web:         http://:7878 (reachable from other machines, without TLS)",
		"listen = \"127.0.0.1:7878\"\npublic_url = \"https://ccbridge.example.com\"": "http://127.0.0.1:7878 (this machine only), links to https://ccbridge.example.com, valid 24h0m0s",
	} {
		var b strings.Builder
		parseWeb(t, web).WriteSummary(&b)
		if !strings.Contains(b.String(), want) {
			t.Errorf("%q: summary lacks %q:\n%s", web, want, b.String())
		}
	}
}

// Links are built on public_url, else on the listen address with the
// scheme it is served with.
func TestWebURL(t *testing.T) {
	for _, tc := range []struct {
		w    Web
		want string
	}{
		{Web{Listen: DefaultWebListen}, "http://127.0.0.1:7878"},
		{Web{Listen: "box.lan:8443", TLSCert: "/c", TLSKey: "/k"}, "https://box.lan:8443"},
		{Web{Listen: DefaultWebListen, PublicURL: "https://ccbridge.example.com/bridge"}, "https://ccbridge.example.com/bridge"},
	} {
		if got := tc.w.URL(); got != tc.want {
			t.Errorf("%+v: URL() = %q, want %q", tc.w, got, tc.want)
		}
	}
}
