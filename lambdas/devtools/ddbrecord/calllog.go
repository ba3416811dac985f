package ddbrecord

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/dynastack/dynastack/constructs/service"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/devtools/repo"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// EnvCallsDir names the directory in which test binaries (testenv.Main)
// and the local runner record the permissions each function's DynamoDB
// requests needed, one file per process in a directory per package.
// Unset, nothing is recorded. test/iamcalls checks the recordings against
// each function's policy.
const EnvCallsDir = "DYNASTACK_CALLS_DIR"

// FunctionCall is a permission one function's request needed.
type FunctionCall struct {
	// Function is the DYNASTACK_SERVICE value of the environment the
	// client was made from.
	Function string `json:"function"`
	Access
}

// TableOrigin is where a created table comes from: a table resource of a
// stage's template.
type TableOrigin struct {
	LogicalID string `json:"logical_id"`
	// TemplateName is the TableName the template gives it; "" when the
	// template leaves the name to CloudFormation.
	TemplateName string `json:"template_name,omitempty"`
}

// line is one line of a call log: a call or a table.
type line struct {
	Call  *FunctionCall `json:"call,omitempty"`
	Table string        `json:"table,omitempty"` // the created table's name
	*TableOrigin
}

// CallLog appends to a JSON Lines file each distinct permission that the
// requests of the clients it instruments needed, and the origin of each
// table created from a template. Every line is written when it is first
// seen, unbuffered, so a process killed later loses nothing. It is safe
// for concurrent use.
type CallLog struct {
	mu   sync.Mutex
	f    *os.File
	seen map[string]bool
}

// OpenCallLog creates a new call log file in dir's directory for this
// process's package (both created if missing).
func OpenCallLog(dir string) (*CallLog, error) {
	// A directory per package: a test process reads only its own (Go's
	// test cache keys on a directory's listing once it is read).
	dir = filepath.Join(dir, packageKey())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("ddbrecord: call log: %w", err)
	}
	f, err := os.CreateTemp(dir, "calls-*.jsonl")
	if err != nil {
		return nil, fmt.Errorf("ddbrecord: call log: %w", err)
	}
	return &CallLog{f: f, seen: map[string]bool{}}, nil
}

// Close closes the file.
func (l *CallLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Close()
}

// Path is the file l writes.
func (l *CallLog) Path() string { return l.f.Name() }

func (l *CallLog) write(v line) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen[string(b)] {
		return nil
	}
	l.seen[string(b)] = true
	_, err = l.f.Write(append(b, '\n'))
	return err
}

// log writes the permissions the request of operation ctx names with
// params needs, as function's. A request is logged before it is sent:
// one that IAM would refuse is exactly what the log must show.
func (l *CallLog) log(ctx context.Context, function string, params any) error {
	for _, a := range Needs(awsmiddleware.GetOperationName(ctx), params) {
		if err := l.write(line{Call: &FunctionCall{Function: function, Access: a}}); err != nil {
			return fmt.Errorf("ddbrecord: call log: %w", err)
		}
	}
	return nil
}

// Tables logs the origin of the tables created from tmpl (names maps
// logical id → created name, as cfntables.Create returns it).
func (l *CallLog) Tables(tmpl *cfntables.Template, names map[string]string) error {
	tables, err := tmpl.Tables()
	if err != nil {
		return err
	}
	for _, t := range tables {
		if name, ok := names[t.LogicalID]; ok {
			if err := l.write(line{Table: name, TableOrigin: &TableOrigin{LogicalID: t.LogicalID, TemplateName: t.Name}}); err != nil {
				return fmt.Errorf("ddbrecord: call log: %w", err)
			}
		}
	}
	return nil
}

// packageKey names the files a process records: its working directory
// relative to the repository, which under go test is the package's (the
// runner processes a test starts inherit it). A package's next run
// replaces its own files (ResetPackageCallLogs) and leaves those of the
// packages whose results came from Go's test cache: the same code made the
// same calls.
func packageKey() string {
	wd, err := os.Getwd()
	if err != nil {
		return "unknown"
	}
	if root, err := repo.Root(wd); err == nil {
		if rel, err := filepath.Rel(root, wd); err == nil {
			wd = rel
		}
	}
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '_'
	}, wd)
}

// ResetPackageCallLogs removes the call logs earlier runs of this
// process's package left in getenv(EnvCallsDir), before its tests record
// again (testenv.Main).
func ResetPackageCallLogs(getenv func(string) string) error {
	dir := getenv(EnvCallsDir)
	if dir == "" {
		return nil
	}
	if err := os.RemoveAll(filepath.Join(dir, packageKey())); err != nil {
		return fmt.Errorf("ddbrecord: call log: %w", err)
	}
	return nil
}

// active is the call log StartCallLog opened, if any.
var active atomic.Pointer[CallLog]

// StartCallLog opens a call log in getenv(EnvCallsDir) when it is set.
// Only the latest log started logs; stop hands over to the log started
// before it, if any, and closes the file. With the variable unset, stop
// does nothing.
func StartCallLog(getenv func(string) string) (stop func() error, err error) {
	dir := getenv(EnvCallsDir)
	if dir == "" {
		return func() error { return nil }, nil
	}
	l, err := OpenCallLog(dir)
	if err != nil {
		return nil, err
	}
	prev := active.Swap(l)
	return func() error {
		active.CompareAndSwap(l, prev)
		return l.Close()
	}, nil
}

// ClientOptions are the options under which ddb.NewClient makes a client
// whose requests the call log StartCallLog opened records as the
// function's that getenv names (DYNASTACK_SERVICE): what a test or the
// local runner passes to a function's constructor. Without an open log,
// or for an environment of no function (the fixtures and assertions of
// tests, the runner's own client), there are none: those calls are
// nobody's permissions. The client stays with the log open when it was
// made: once that log is closed its requests fail rather than go
// unrecorded.
func ClientOptions(getenv func(string) string) []ddb.Option {
	fn, l := getenv(service.EnvFunction), active.Load()
	if fn == "" || l == nil {
		return nil
	}
	handle := func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		if err := l.log(ctx, fn, in.Parameters); err != nil {
			return middleware.InitializeOutput{}, middleware.Metadata{}, err
		}
		return next.HandleInitialize(ctx, in)
	}
	return []ddb.Option{func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
			return s.Initialize.Add(middleware.InitializeMiddlewareFunc("ddbrecord.CallLog", handle), middleware.After)
		})
	}}
}

// LogTables logs the origin of tables created from tmpl in the call log
// StartCallLog opened; without one it does nothing.
func LogTables(tmpl *cfntables.Template, names map[string]string) error {
	if l := active.Load(); l != nil {
		return l.Tables(tmpl, names)
	}
	return nil
}

// CallLogs is what the call logs of a directory hold together.
type CallLogs struct {
	Files  int
	Calls  []FunctionCall         // distinct
	Tables map[string]TableOrigin // created name → origin
}

// ReadCallLogs reads every call log in dir.
func ReadCallLogs(dir string) (CallLogs, error) {
	out := CallLogs{Tables: map[string]TableOrigin{}}
	files, err := filepath.Glob(filepath.Join(dir, "*", "calls-*.jsonl"))
	if err != nil {
		return out, err
	}
	seen := map[FunctionCall]bool{}
	var errs []error
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			return out, err
		}
		out.Files++
		sc := bufio.NewScanner(f)
		for n := 1; sc.Scan(); n++ {
			text := strings.TrimSpace(sc.Text())
			if text == "" {
				continue
			}
			var v line
			if err := json.Unmarshal([]byte(text), &v); err != nil {
				// A process killed mid-write leaves at most a torn last line.
				errs = append(errs, fmt.Errorf("%s:%d: %w", path, n, err))
				continue
			}
			switch {
			case v.Call != nil:
				if !seen[*v.Call] {
					seen[*v.Call] = true
					out.Calls = append(out.Calls, *v.Call)
				}
			case v.Table != "" && v.TableOrigin != nil:
				out.Tables[v.Table] = *v.TableOrigin
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", path, err))
		}
	}
	return out, errors.Join(errs...)
}
