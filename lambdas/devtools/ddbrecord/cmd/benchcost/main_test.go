package main

import (
	"bytes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	in := `goos: linux
pkg: github.com/dynastack/dynastack/lambdas/services/itsm
BenchmarkGetTicket/handler-2         	      20	   3000000 ns/op	         1.000 RCU/op	         0 WCU/op	         1.000 req/op	 1024 B/op
BenchmarkGetTicket/rawsdk-2          	      20	   9000000 ns/op	         1.000 RCU/op	         0 WCU/op	         1.000 req/op
BenchmarkGetTicket/rawsdk-2          	      20	   2000000 ns/op	         1.000 RCU/op	         0 WCU/op	         1.000 req/op
BenchmarkGetTicket/rawsdk-2          	      20	   2000000 ns/op	         1.000 RCU/op	         0 WCU/op	         1.000 req/op
BenchmarkAddComment/handler-2        	      20	  16000000 ns/op	         0 RCU/op	         2.800 WCU/op	         1.000 req/op
BenchmarkGetTicket/canned/handler-2  	    2000	     84000 ns/op	         1.000 calls/op	     84000 cpu-ns/op	       270.0 recvB/op	       133.0 sentB/op	       580.4 µs@256MB/op	   35162 B/op	     372 allocs/op
BenchmarkGetTicket/canned/rawsdk-2   	    2000	     56000 ns/op	         1.000 calls/op	     56000 cpu-ns/op	       270.0 recvB/op	       133.0 sentB/op	       387.0 µs@256MB/op	   27150 B/op	     326 allocs/op
BenchmarkAPI/canned/GET_/tickets/{id}_(unknown_id)/handler-2         	     200	    202874 ns/op	         1.000 calls/op	    212000 cpu-ns/op	         2.000 recvB/op	       133.0 sentB/op	      1466 µs@256MB/op	   34809 B/op	     365 allocs/op
BenchmarkAPI/canned/GET_/tickets/{id}_(unknown_id)/rawsdk-2          	     200	    136840 ns/op	         1.000 calls/op	    106000 cpu-ns/op	         2.000 recvB/op	       133.0 sentB/op	      1022 µs@256MB/op	   26574 B/op	     302 allocs/op
BenchmarkAPI/canned/GET_/tickets/{id}_(malformed_id)/handler-2       	     200	     21114 ns/op	         0 calls/op	     21570 cpu-ns/op	         0 recvB/op	         0 sentB/op	       149.1 µs@256MB/op	    7896 B/op	      52 allocs/op
BenchmarkAPI/canned/GET_/tickets/{id}_(malformed_id)/rawsdk-2        	     200	       703.6 ns/op	         0 calls/op	       850.0 cpu-ns/op	         0 recvB/op	         0 sentB/op	         5.874 µs@256MB/op	     128 B/op	       1 allocs/op
PASS
`
	var out bytes.Buffer
	require.NoError(t, run(strings.NewReader(in), &out))
	got := out.String()
	assert.True(t, strings.HasPrefix(got, in), "input not passed through:\n%s", got)
	assert.Contains(t, got, "| itsm GetTicket | 3.00 | 2.00 | 1.50 | 1 / 1 / 0 | 1 / 1 / 0 |\n", "table")
	assert.Contains(t, got, "| itsm GetTicket | 84.0 | 56.0 | 84.0 | 56.0 | 1.50 | 580 | 387 | 35162 | 27150 | 372 | 326 | 133 / 270; 133 / 270 |\n", "canned table")
	assert.Contains(t, got, "| itsm GET /tickets/{id} (unknown id) | 202.9 | 136.8 | 212.0 | 106.0 | 2.00 | 1465 | 732 |", "canned table: the generic pair")
	assert.Contains(t, got, "| itsm GET /tickets/{id} (malformed id) | 21.1 | 0.7 | 21.6 | 0.8 | – |", "a pair that made no DynamoDB request got a ratio")
	assert.NotContains(t, got, "AddComment |", "a benchmark without its raw SDK pair got a row")
}
