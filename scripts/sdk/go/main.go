// Calls a running partner-api through the client openapi-generator (`go`) generated from the
// 3.0.3 document that server serves, through the stand-in balancer the document names as its
// server (scripts/check-sdks), so the client's default server is the balancer: ping is a ping
// object with pong true; an unknown path (a second client whose one server is
// <origin>/nowhere/v1) is a 404 read as the generated ErrorEnvelope, code resource_missing; on
// a server with a tiny quota, pings until one is refused (at most 20) give a 429 read the same
// way, code rate_limited, with a Retry-After of whole seconds, at least 1; the balancer's HTML
// 503 is the generated GenericOpenAPIError with status 503: a value to retry, nothing parsed
// into the envelope; and after Retry-After seconds the retried ping answers again. Each
// error's request id has the documented form and is the one the Service-Request-Id header
// carries.
// Usage: sdk-check-go <origin> (the stand-in's, which the generated client must default to).
package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"sdkcheck/partnerapi"
)

var requestID = regexp.MustCompile(`^req_[0-9a-f]{32}$`)

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "FAIL: go client: "+format+"\n", args...)
	os.Exit(1)
}

// errorEnvelope reads a refused call: the status must be want, and the error the generated
// client returned must carry the generated ErrorEnvelope, whose code must be code and whose
// request id must have the documented form and be the response's Service-Request-Id.
func errorEnvelope(what string, response *http.Response, err error, want int, code string) partnerapi.ErrorEnvelope {
	if err == nil {
		fail("%s: no error returned", what)
	}
	if response == nil {
		fail("%s: no response: %v", what, err)
	}
	if response.StatusCode != want {
		fail("%s: status %d, expected %d (%v)", what, response.StatusCode, want, err)
	}
	var apiError *partnerapi.GenericOpenAPIError
	if !errors.As(err, &apiError) {
		fail("%s: the error is a %T, not the generated GenericOpenAPIError: %v", what, err, err)
	}
	envelope, ok := apiError.Model().(partnerapi.ErrorEnvelope)
	if !ok {
		fail("%s: the error model is a %T, not the generated ErrorEnvelope (body %s)", what, apiError.Model(), apiError.Body())
	}
	if got := envelope.Error.GetCode(); got != code {
		fail("%s: code %q, expected %q", what, got, code)
	}
	id := envelope.Error.GetRequestId()
	if !requestID.MatchString(id) {
		fail("%s: request_id %q does not match %s", what, id, requestID)
	}
	if header := response.Header.Get("Service-Request-Id"); header != id {
		fail("%s: request_id %q, but the Service-Request-Id header is %q", what, id, header)
	}
	return envelope
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: sdk-check-go <server origin>")
		os.Exit(2)
	}
	origin := os.Args[1]
	configuration := partnerapi.NewConfiguration()
	if base, err := configuration.ServerURL(0, nil); err != nil || base != origin+"/v1" {
		fail("the generated default server is %q (%v), expected %q: not generated from this server's document?", base, err, origin+"/v1")
	}
	api := partnerapi.NewAPIClient(configuration).UtilityAPI
	ctx := context.Background()

	ping, response, err := api.Ping(ctx).Execute()
	if err != nil {
		fail("ping: %v", err)
	}
	if response.StatusCode != http.StatusOK || ping.GetObject() != partnerapi.PING || !ping.GetPong() {
		fail("ping: status %d, object %q, pong %t", response.StatusCode, ping.GetObject(), ping.GetPong())
	}
	fmt.Printf("ok: go: ping answered pong %t\n", ping.GetPong())

	// Another server, for this call only: <origin>/nowhere/v1/ping is no path.
	elsewhere := partnerapi.NewConfiguration()
	elsewhere.Servers = partnerapi.ServerConfigurations{{URL: origin + "/nowhere/v1"}}
	_, response, err = partnerapi.NewAPIClient(elsewhere).UtilityAPI.Ping(ctx).Execute()
	envelope := errorEnvelope("unknown path", response, err, http.StatusNotFound, "resource_missing")
	fmt.Printf("ok: go: 404 read: code %s, request id %s\n", envelope.Error.GetCode(), envelope.Error.GetRequestId())

	retryAfterSeconds := 0
	for attempt := 1; ; attempt++ {
		_, response, err = api.Ping(ctx).Execute()
		if err == nil {
			if attempt == 20 {
				fail("20 pings in a row were answered: is the server's quota tiny?")
			}
			continue
		}
		envelope = errorEnvelope("refused ping", response, err, http.StatusTooManyRequests, "rate_limited")
		retryAfter, convErr := strconv.Atoi(response.Header.Get("Retry-After"))
		if convErr != nil || retryAfter < 1 {
			fail("refused ping: Retry-After %q is not a whole number of seconds >= 1", response.Header.Get("Retry-After"))
		}
		fmt.Printf("ok: go: 429 read after %d pings: code %s, request id %s, Retry-After %d\n",
			attempt, envelope.Error.GetCode(), envelope.Error.GetRequestId(), retryAfter)
		retryAfterSeconds = retryAfter
		break
	}

	control, err := http.Post(origin+"/standin/unavailable", "text/plain", nil)
	if err != nil || control.StatusCode != http.StatusNoContent {
		fail("the stand-in did not take its control: %v", err)
	}
	control.Body.Close()
	_, response, err = api.Ping(ctx).Execute()
	var apiError *partnerapi.GenericOpenAPIError
	if !errors.As(err, &apiError) || response == nil || response.StatusCode != http.StatusServiceUnavailable {
		fail("the balancer's 503: %v (%v)", err, response)
	}
	if _, parsed := apiError.Model().(partnerapi.ErrorEnvelope); parsed || !strings.HasPrefix(string(apiError.Body()), "<html>") {
		fail("the balancer's 503 was read as %T, body %q", apiError.Model(), apiError.Body())
	}
	fmt.Println("ok: go: the balancer's HTML 503 is a GenericOpenAPIError to retry, nothing parsed")

	time.Sleep(time.Duration(retryAfterSeconds) * time.Second)
	ping, _, err = api.Ping(ctx).Execute()
	if err != nil || !ping.GetPong() {
		fail("retried ping: %v", err)
	}
	fmt.Println("ok: go: the retried ping answered")
}
