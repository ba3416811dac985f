// Package ntfysink is dev-only code: an HTTP server that speaks ntfy's
// publish API (JSON publishing, POST / with the topic in the body; and
// POST /<topic> with the message as the body and Title, Priority, Tags,
// Click and Authorization headers), answers as ntfy does (the message as
// JSON with its id), and keeps every notification it accepted. The local
// runner serves it when no NTFY_URL is set; tests use it to assert each
// request and to make the server fail, throttle or hang on purpose.
//
// Never import this package from code that runs in Lambda.
package ntfysink

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Notification is one accepted publish as ntfy would store it.
type Notification struct {
	ID       string   `json:"id"`
	Time     int64    `json:"time"`
	Event    string   `json:"event"`
	Topic    string   `json:"topic"`
	Message  string   `json:"message"`
	Title    string   `json:"title,omitempty"`
	Priority int      `json:"priority,omitempty"`
	Tags     []string `json:"tags,omitempty"`
	Click    string   `json:"click,omitempty"`
	// Authorization is the request's header, kept so tests can assert it
	// (never served by List in a shared environment).
	Authorization string `json:"-"`
	// ContentType is the request's Content-Type.
	ContentType string `json:"-"`
	// TraceHeader is the request's X-Amzn-Trace-Id: the trace of the
	// message the processor delivered (listed, to follow one locally).
	TraceHeader string `json:"trace_header,omitempty"`
}

// Fault is how the next requests fail.
type Fault struct {
	// Status answers with this HTTP status (e.g. 500, 429); 0 none.
	Status int
	// Delay holds the answer this long (a hang past the client timeout).
	Delay time.Duration
}

// Sink is the server's state. The zero value is not usable: use New.
type Sink struct {
	mu       sync.Mutex
	got      []Notification // the newest Keep
	keep     int
	faults   []Fault
	token    string
	log      *slog.Logger
	seen     int // requests, accepted or not
	accepted int // notifications accepted, kept or not
}

// New returns a sink. With token != "", requests must carry
// "Authorization: Bearer <token>" (else 401, as ntfy answers); log may be
// nil.
func New(token string, log *slog.Logger) *Sink {
	return &Sink{token: token, log: log, keep: Keep}
}

// Keep is how many notifications a sink keeps, the newest: the local
// runner's sink lives as long as a developer's session.
const Keep = 1000

// FailNext queues faults for the next requests, one per request.
func (s *Sink) FailNext(f ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, f...)
}

// Clear drops the faults FailNext queued that no request met.
func (s *Sink) Clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = nil
}

// Notifications returns what was accepted, oldest first: the newest Keep.
func (s *Sink) Notifications() []Notification {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Notification(nil), s.got...)
}

// Accepted counts the notifications accepted since New, including those
// no longer kept: a run of more than Keep counts them here.
func (s *Sink) Accepted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepted
}

// Requests counts the publish requests received, failed ones included.
func (s *Sink) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen
}

var topicName = regexp.MustCompile(`^[-_A-Za-z0-9]{1,64}$`)

// ServeHTTP serves publishing (POST/PUT) and the list (GET: every
// accepted notification as JSON, newest last).
func (s *Sink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"notifications": s.Notifications()})
		return
	}
	if r.Method != http.MethodPost && r.Method != http.MethodPut {
		writeError(w, http.StatusMethodNotAllowed, 40500, "method not allowed")
		return
	}
	// The body is read first, so that the server notices a client that
	// gives up during a Delay (net/http cancels the request context only
	// once the body is consumed) and then accepts nothing.
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		writeError(w, http.StatusBadRequest, 40000, "cannot read body")
		return
	}
	s.mu.Lock()
	s.seen++
	var f Fault
	if len(s.faults) > 0 {
		f, s.faults = s.faults[0], s.faults[1:]
	}
	s.mu.Unlock()
	if f.Delay > 0 {
		select {
		case <-time.After(f.Delay):
		case <-r.Context().Done():
			return
		}
	}
	if f.Status != 0 {
		writeError(w, f.Status, f.Status*100, "injected failure")
		return
	}
	if s.token != "" && r.Header.Get("Authorization") != "Bearer "+s.token {
		writeError(w, http.StatusUnauthorized, 40101, "unauthorized")
		return
	}
	n := Notification{Event: "message", Time: time.Now().Unix(), Authorization: r.Header.Get("Authorization"), ContentType: r.Header.Get("Content-Type"), TraceHeader: r.Header.Get("X-Amzn-Trace-Id")}
	if path := strings.Trim(r.URL.Path, "/"); path == "" {
		// JSON publishing: ntfy takes the body as JSON when posting to
		// the root.
		var in struct {
			Topic    string   `json:"topic"`
			Message  string   `json:"message"`
			Title    string   `json:"title"`
			Priority int      `json:"priority"`
			Tags     []string `json:"tags"`
			Click    string   `json:"click"`
		}
		if err := json.Unmarshal(body, &in); err != nil {
			writeError(w, http.StatusBadRequest, 40017, "invalid request: request body must be message JSON")
			return
		}
		n.Topic, n.Message, n.Title, n.Priority, n.Tags, n.Click = in.Topic, in.Message, in.Title, in.Priority, in.Tags, in.Click
	} else {
		n.Topic, n.Message = path, string(body)
		n.Title, n.Click = r.Header.Get("Title"), r.Header.Get("Click")
		if p := r.Header.Get("Priority"); p != "" {
			n.Priority, _ = strconv.Atoi(p)
		}
		if t := r.Header.Get("Tags"); t != "" {
			n.Tags = strings.Split(t, ",")
		}
	}
	if !topicName.MatchString(n.Topic) {
		writeError(w, http.StatusBadRequest, 40010, "invalid request: topic invalid")
		return
	}
	if n.Priority < 0 || n.Priority > 5 {
		writeError(w, http.StatusBadRequest, 40007, "invalid request: priority invalid")
		return
	}
	n.ID = newID()
	s.mu.Lock()
	s.got = append(s.got, n)
	s.accepted++
	if len(s.got) > s.keep {
		// Copied, not resliced, so the dropped ones can be collected.
		s.got = append([]Notification(nil), s.got[len(s.got)-s.keep:]...)
	}
	s.mu.Unlock()
	if s.log != nil {
		s.log.Info("ntfy notification", "topic", n.Topic, "id", n.ID, "title", n.Title, "message", n.Message, "priority", n.Priority, "tags", n.Tags)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(n)
}

func writeError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, `{"code":%d,"http":%d,"error":%q}`+"\n", code, status, msg)
}

// newID is a 12-character id like ntfy's.
func newID() string {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = letters[int(b[i])%len(letters)]
	}
	return string(b)
}
