module partner-api/tls-probe

// Go 1.24 and later offer the hybrid X25519MLKEM768 by default (an older `go` line here would
// turn it off for this module); ConnectionState.CurveID is from Go 1.25.
go 1.25
