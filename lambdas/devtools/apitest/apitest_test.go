package apitest_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/stretchr/testify/assert"
)

// echo answers POST /echo with the body and the X-Test header it got, and
// anything else with platform/api errors.
func echo() http.Handler {
	route := service.Route{Method: "POST", Path: "/echo"}
	r := api.NewRouter(service.Function{Name: "echo", Kind: service.HTTP, Routes: []service.Route{route}})
	r.Handle(route, func(w http.ResponseWriter, r *http.Request) error {
		b, _ := io.ReadAll(r.Body)
		if len(b) == 0 {
			return api.Invalid(api.FieldError{Field: "body", Message: "is empty"})
		}
		api.WriteJSON(w, http.StatusOK, map[string]string{"body": string(b), "header": r.Header.Get("X-Test")})
		return nil
	})
	return api.Instrument(slog.New(slog.DiscardHandler), r.Done())
}

func TestDo(t *testing.T) {
	r := apitest.Do(t, echo(), "POST", "/echo", "hello", "X-Test", "yes")
	var got map[string]string
	r.JSON(t, &got)
	assert.Equal(t, 200, r.Status, "Do: status; body %s", r.Body)
	assert.Equal(t, "hello", got["body"], "Do: body sent")
	assert.Equal(t, "yes", got["header"], "Do: header sent")
	assert.NotEmpty(t, r.Header.Get("X-Request-Id"), "Do: X-Request-Id; header %v", r.Header)
}

func TestWantError(t *testing.T) {
	h := echo()
	apitest.WantError(t, apitest.Do(t, h, "POST", "/echo", ""), 400, "validation_failed", "body", "empty")
	apitest.WantError(t, apitest.Do(t, h, "GET", "/echo", ""), 405, "method_not_allowed", "", "")

	r := apitest.Do(t, h, "POST", "/echo", "")
	for _, tt := range []struct {
		name              string
		status            int
		code, field, text string
		r                 apitest.Response
	}{
		{"status", 404, "validation_failed", "", "", r},
		{"code", 400, "not_found", "", "", r},
		{"field", 400, "validation_failed", "name", "", r},
		{"message", 400, "validation_failed", "", "missing", r},
		{"request id", 400, "validation_failed", "", "", apitest.Response{Status: r.Status, Header: http.Header{}, Body: r.Body}},
	} {
		failures := run(func(t testing.TB) { apitest.WantError(t, tt.r, tt.status, tt.code, tt.field, tt.text) })
		assert.NotEmpty(t, failures, "%s: a wrong %s passed", tt.name, tt.name)
	}
}

func TestClock(t *testing.T) {
	start := time.Date(2026, 2, 9, 12, 0, 0, 0, time.UTC)
	c := apitest.NewClock(start, time.Second)
	// WithinDuration with 0 is time.Time's Equal, with both values printed.
	assert.WithinDuration(t, start.Add(time.Second), c.Now(), 0, "first reading")
	c.Advance(time.Hour)
	assert.WithinDuration(t, start.Add(time.Hour+2*time.Second), c.Now(), 0, "after Advance")
	c.Set(start)
	assert.WithinDuration(t, start.Add(time.Second), c.Now(), 0, "after Set")
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() { c.Now() })
	}
	wg.Wait()
	assert.WithinDuration(t, start.Add(12*time.Second), c.Now(), 0, "after concurrent readings")
}

// recorder is a testing.TB that records failures; Fatalf and FailNow (what
// require calls) end the goroutine as testing.T's do.
type recorder struct {
	testing.TB
	failures []string
}

func (r *recorder) Helper() {}

func (r *recorder) Name() string { return "recorder" }

func (r *recorder) FailNow() { runtime.Goexit() }

func (r *recorder) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

func run(f func(testing.TB)) []string {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r.failures
}

func ExampleClock() {
	c := apitest.NewClock(time.Date(2026, 2, 9, 12, 0, 0, 0, time.UTC), time.Millisecond)
	fmt.Println(c.Now().Format(time.StampMilli))
	fmt.Println(c.Now().Format(time.StampMilli))
	// Output:
	// Feb  9 12:00:00.001
	// Feb  9 12:00:00.002
}
