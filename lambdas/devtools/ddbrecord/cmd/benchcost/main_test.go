package main

import (
	"bytes"
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
PASS
`
	var out bytes.Buffer
	if err := run(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.HasPrefix(got, in) {
		t.Errorf("input not passed through:\n%s", got)
	}
	want := "| itsm GetTicket | 3.00 | 2.00 | 1.50 | 1 / 1 / 0 | 1 / 1 / 0 |\n"
	if !strings.Contains(got, want) {
		t.Errorf("table lacks %q:\n%s", want, got)
	}
	if want := "| itsm GetTicket | 84.0 | 56.0 | 84.0 | 56.0 | 1.50 | 580 | 387 | 35162 | 27150 | 372 | 326 | 133 / 270; 133 / 270 |\n"; !strings.Contains(got, want) {
		t.Errorf("canned table lacks %q:\n%s", want, got)
	}
	if strings.Contains(got, "AddComment |") {
		t.Errorf("a benchmark without its raw SDK pair got a row:\n%s", got)
	}
}
