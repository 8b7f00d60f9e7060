// Command tls-probe connects to partner-api twice with Go's crypto/tls, a client as partners'
// Go code and Chrome-like stacks speak it, and prints what was negotiated: the protocol, the
// key exchange, the cipher, whether the second connection resumed the first's session, and
// the status of GET /v1/ping. scripts/check-tls runs it; it needs only the standard library.
//
//	go run . -ca ca.pem [-tls12] [-groups X25519MLKEM768,X25519,P256,P384] localhost:PORT
//
// Go's defaults (no -groups) offer X25519MLKEM768 first, from Go 1.24 on. Over TLS 1.2, Go
// resumes only with a session ticket (it keeps no session ids), so resumed=true there proves
// the server's TLS 1.2 tickets.
//
// With -load DURATION it is instead the handshake load of `scripts/bench --tls`: -conns
// goroutines each make one connection after another for DURATION (a TLS handshake, GET
// /v1/ping with Connection: close, the answer read, the close), with -resume offering the
// session of the goroutine's previous connection, and it prints how many connections a second
// were made and how many of them resumed.
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
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	caFile := flag.String("ca", "", "PEM file of the CA that signed the server's certificate")
	tls12 := flag.Bool("tls12", false, "offer TLS 1.2 only")
	groups := flag.String("groups", "", "key exchanges to offer, in order (default: Go's own)")
	load := flag.Duration("load", 0, "make connections for this long and print the rate")
	conns := flag.Int("conns", 16, "with -load: connections made at once")
	resume := flag.Bool("resume", false, "with -load: resume the previous connection's session")
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
		"P384":           tls.CurveP384,
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
	if *load > 0 {
		runLoad(config, flag.Arg(0), *load, *conns, *resume)
		return
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

// ping makes one connection with config, gets /v1/ping on it and closes it; it says whether
// the session was resumed.
func ping(config *tls.Config, address string) (bool, error) {
	conn, err := tls.Dial("tcp", address, config)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprint(conn, "GET /v1/ping HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
	response, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return false, err
	}
	response.Body.Close()
	if response.StatusCode != http.StatusOK {
		return false, fmt.Errorf("status %d", response.StatusCode)
	}
	return conn.ConnectionState().DidResume, nil
}

// runLoad is the -load mode; see the package documentation.
func runLoad(base *tls.Config, address string, duration time.Duration, conns int, resume bool) {
	var made, resumed, failed atomic.Int64
	deadline := time.Now().Add(duration)
	var wait sync.WaitGroup
	for worker := 0; worker < conns; worker++ {
		config := base.Clone()
		config.ClientSessionCache = nil
		if resume {
			config.ClientSessionCache = tls.NewLRUClientSessionCache(1)
			// The first connection makes the session the others resume.
			if _, err := ping(config, address); err != nil {
				fail(err)
			}
		}
		wait.Add(1)
		go func() {
			defer wait.Done()
			for time.Now().Before(deadline) {
				wasResumed, err := ping(config, address)
				if err != nil {
					failed.Add(1)
					continue
				}
				made.Add(1)
				if wasResumed {
					resumed.Add(1)
				}
			}
		}()
	}
	started := time.Now()
	wait.Wait()
	elapsed := time.Since(started).Seconds()
	fmt.Printf("connections=%d per_second=%.0f resumed=%d failed=%d\n",
		made.Load(), float64(made.Load())/elapsed, resumed.Load(), failed.Load())
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "tls-probe:", err)
	os.Exit(1)
}
