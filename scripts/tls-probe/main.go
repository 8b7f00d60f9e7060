// Command tls-probe connects to partner-api twice with Go's crypto/tls, a client as partners'
// Go code and Chrome-like stacks speak it, and prints what was negotiated: the protocol, the
// key exchange, the cipher, whether the second connection resumed the first's session, and
// the status of GET /v1/ping. scripts/check-tls runs it; it needs only the standard library.
//
//	go run . -ca ca.pem [-tls12] [-groups X25519MLKEM768,X25519,P256] localhost:PORT
//
// Go's defaults (no -groups) offer X25519MLKEM768 first, from Go 1.24 on. Over TLS 1.2, Go
// resumes only with a session ticket (it keeps no session ids), so resumed=true there proves
// the server's TLS 1.2 tickets.
package main

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	caFile := flag.String("ca", "", "PEM file of the CA that signed the server's certificate")
	tls12 := flag.Bool("tls12", false, "offer TLS 1.2 only")
	groups := flag.String("groups", "", "key exchanges to offer, in order (default: Go's own)")
	flag.Parse()
	pem, err := os.ReadFile(*caFile)
	if err != nil {
		fail(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		fail(fmt.Errorf("no certificate in %s", *caFile))
	}
	config := &tls.Config{
		RootCAs:            roots,
		ServerName:         "localhost",
		ClientSessionCache: tls.NewLRUClientSessionCache(4),
	}
	if *tls12 {
		config.MaxVersion = tls.VersionTLS12
	}
	known := map[string]tls.CurveID{
		"X25519MLKEM768": tls.X25519MLKEM768,
		"X25519":         tls.X25519,
		"P256":           tls.CurveP256,
	}
	for _, name := range strings.Split(*groups, ",") {
		if name == "" {
			continue
		}
		id, ok := known[name]
		if !ok {
			fail(fmt.Errorf("unknown group %q", name))
		}
		config.CurvePreferences = append(config.CurvePreferences, id)
	}
	for attempt := 1; attempt <= 2; attempt++ {
		conn, err := tls.Dial("tcp", flag.Arg(0), config)
		if err != nil {
			fail(err)
		}
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		// Reading the answer also takes in the TLS 1.3 tickets, which follow the handshake.
		fmt.Fprint(conn, "GET /v1/ping HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
		response, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			fail(err)
		}
		response.Body.Close()
		state := conn.ConnectionState()
		fmt.Printf("connection=%d version=%s group=%s cipher=%s resumed=%t status=%d\n",
			attempt, tls.VersionName(state.Version), state.CurveID,
			tls.CipherSuiteName(state.CipherSuite), state.DidResume, response.StatusCode)
		conn.Close()
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "tls-probe:", err)
	os.Exit(1)
}
