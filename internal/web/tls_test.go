package web

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ccbridge test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	write(t, certFile, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	write(t, keyFile, string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})))
	c, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(c)
	return certFile, keyFile, pool
}

func TestServerTLS(t *testing.T) {
	cert, key, pool := selfSigned(t)
	e := newEnv(t, func(o *Options) { o.Listen, o.TLSCert, o.TLSKey = "127.0.0.1:0", cert, key })
	srv := NewServer(e.h)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	link := e.h.Link(SessionScope("proj"), 0)
	if !strings.HasPrefix(link, "https://"+srv.Addr()+"/s/") {
		t.Fatalf("link = %q, want https on %s", link, srv.Addr())
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	resp, err := c.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.ProtoMajor != 2 {
		t.Fatalf("GET over TLS = %d %s, want 200 over HTTP/2", resp.StatusCode, resp.Proto)
	}
}

func TestServerBadTLSPairIsStartsError(t *testing.T) {
	cert, _, _ := selfSigned(t)
	e := newEnv(t, func(o *Options) { o.Listen, o.TLSCert, o.TLSKey = "127.0.0.1:0", cert, cert })
	srv := NewServer(e.h)
	if err := srv.Start(); err == nil || !strings.Contains(err.Error(), "tls_cert") {
		t.Fatalf("Start with a bad pair = %v, want an error naming tls_cert", err)
	}
	if srv.Addr() != "" {
		t.Error("the server listens despite the bad pair")
	}
}
