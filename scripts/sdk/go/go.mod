// The Go check of scripts/check-sdks: main.go here, and the client openapi-generator (`go`)
// generated from the served 3.0.3 document, as package partnerapi beside it. No requirements:
// the generated client must build from the standard library alone (GOPROXY is off).
module sdkcheck

go 1.23
