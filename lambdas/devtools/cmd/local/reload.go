package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/devtools/ddblocal"
)

// Reloading (make dev, -reload): the runner becomes a supervisor. It owns
// what is slow to make and holds state — the listening socket and DynamoDB
// Local with its tables and data — and runs the functions in a child
// process: this same program, built from the working tree, started
// without -reload against the supervisor's DynamoDB Local (so it keeps
// existing tables and creates only new ones) and serving the supervisor's
// socket, which it inherits. On a saved change the supervisor rebuilds the
// child (Go's build cache recompiles only the changed packages), starts
// the new child on the same socket, waits for its ready line and only
// then stops the old one: no request meets a closed port, and a build or
// start that fails leaves the last good child serving.
//
// What a restart resets: the child's in-memory fakes (queued SQS
// messages, captured EventBridge events and ntfy notifications, schedule
// counters) and the stream consumers' positions (each restarts at its
// mapping's StartingPosition, as a new Lambda deployment would). What it
// keeps: DynamoDB Local, every table and item, the port.

const (
	// envListener names the inherited listening socket's descriptor in
	// the child's environment.
	envListener = "DYNASTACK_LOCAL_LISTENER"
	// debounce collects an editor's burst of events (write, rename,
	// chmod; gofmt on save) and a checkout's many files into one reload.
	debounce = 300 * time.Millisecond
	// readyLine starts the line run prints when it serves.
	readyLine = "dynastack local ready on "
	// childStartTimeout bounds a new child's way to its ready line.
	childStartTimeout = 2 * time.Minute
)

// listen returns the socket a supervisor handed down, or a new one on addr.
func listen(addr string) (net.Listener, error) {
	if v := os.Getenv(envListener); v != "" {
		fd, err := strconv.Atoi(v)
		if err != nil {
			return nil, fmt.Errorf("%s=%q is no file descriptor", envListener, v)
		}
		f := os.NewFile(uintptr(fd), "listener")
		defer f.Close()
		return net.FileListener(f)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%w (another make dev? choose a port with PORT=…)", err)
	}
	return ln, nil
}

// change is what a batch of file events asks for.
type change uint8

const (
	changeCode      change = 1 << iota // Go code the functions link: rebuild the child
	changeInfra                        // Go code of the CDK app: re-synthesize the templates
	changeTemplates                    // the templates: restart the child on them
)

// classify maps one changed path to what it asks for; src is the
// repository root.
func classify(src, templates, path string) change {
	if filepath.Dir(path) == templates {
		if strings.HasSuffix(path, ".template.json") {
			return changeTemplates
		}
		return 0
	}
	rel, err := filepath.Rel(src, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return 0
	}
	base := filepath.Base(path)
	goFile := strings.HasSuffix(base, ".go") && !strings.HasSuffix(base, "_test.go")
	if !goFile && base != "go.mod" && base != "go.sum" && base != "cdk.json" {
		return 0
	}
	switch top, _, _ := strings.Cut(filepath.ToSlash(rel), "/"); top {
	case "lambdas":
		return changeCode
	case "constructs":
		// The contracts the functions import and the constructs that
		// make the templates live here.
		return changeCode | changeInfra
	case "infra", "app", "cdk.json":
		return changeInfra
	}
	return 0
}

// watchedTrees are the directories under the repository root whose files
// classify can ask something for.
var watchedTrees = []string{"lambdas", "constructs", "infra", "app"}

// skipDir is a directory no reload depends on.
func skipDir(name string) bool {
	return strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata" || name == "cdk.out" || name == "bin"
}

// addTree watches dir and every directory below it.
func addTree(w *fsnotify.Watcher, dir string) error {
	return filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if path != dir && skipDir(d.Name()) {
			return filepath.SkipDir
		}
		return w.Add(path)
	})
}

// supervisor is the reloading runner.
type supervisor struct {
	log       *slog.Logger
	src       string // repository root: built and watched
	templates string // the template directory
	synth     string // shell command re-synthesizing templates; "" reports instead
	args      []string
	env       []string
	listener  *os.File
	tmp       string // built children

	bin    string   // the current child's program
	sum    [32]byte // its content
	tables map[string]string
	child  *child
	builds int
}

// child is one run of the functions.
type child struct {
	cmd    *exec.Cmd
	ready  chan struct{} // closed at its ready line
	exited chan struct{} // closed when it has exited; err is then set
	err    error
}

// supervise runs the reloading runner until ctx ends.
func supervise(ctx context.Context, log *slog.Logger, dir, addr, src, synth string, verbose bool) error {
	var err error
	if dir, err = templateDir(dir); err != nil {
		return err
	}
	if src == "" {
		if src, err = repoRoot(); err != nil {
			return err
		}
	}
	if src, err = filepath.Abs(src); err != nil {
		return err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return err
	}
	tmpls, err := cfntables.LoadDir(dir)
	if err != nil {
		return err
	}
	ln, err := listen(addr)
	if err != nil {
		return err
	}
	lf, err := ln.(*net.TCPListener).File()
	ln.Close() // lf holds the socket
	if err != nil {
		return err
	}
	defer lf.Close()

	endpoint, stopDynamo, err := dynamoEndpoint(ctx, log, verbose)
	if err != nil {
		return err
	}
	defer stopDynamo()

	self, err := os.Executable()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "dynastack-local-reload-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	s := &supervisor{log: log, src: src, templates: dir, synth: synth, listener: lf, tmp: tmp, bin: self,
		args: []string{"-templates", dir}, tables: tableDefs(tmpls)}
	if verbose {
		s.args = append(s.args, "-v")
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, ddblocal.EnvEndpoint+"=") && !strings.HasPrefix(kv, envListener+"=") {
			s.env = append(s.env, kv)
		}
	}
	s.env = append(s.env, ddblocal.EnvEndpoint+"="+endpoint, envListener+"=3")
	if s.sum, err = fileSum(self); err != nil {
		return err
	}

	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	for _, tree := range watchedTrees {
		if err := addTree(w, filepath.Join(src, tree)); err != nil {
			return fmt.Errorf("watch %s: %w", tree, err)
		}
	}
	if err := w.Add(dir); err != nil {
		return fmt.Errorf("watch %s: %w", dir, err)
	}
	if err := w.Add(src); err != nil { // cdk.json
		return fmt.Errorf("watch %s: %w", src, err)
	}

	first, err := s.start(ctx)
	if err != nil {
		return err
	}
	s.child = first
	defer func() { s.stop(s.child) }()
	log.Info("reloading: watching Go code and templates; DynamoDB Local and its data stay across reloads",
		"src", src, "templates", dir, "resynth", synth != "")

	var (
		pending change
		since   time.Time
		files   []string
		timer   = time.NewTimer(time.Hour)
	)
	timer.Stop()
	for {
		var exited chan struct{}
		if s.child != nil {
			exited = s.child.exited
		}
		select {
		case <-ctx.Done():
			return nil
		case <-exited:
			log.Error("the functions' server exited; save a change to start it again", "error", errString(s.child.err))
			s.child = nil
		case err := <-w.Errors:
			log.Warn("file watcher", "error", err.Error())
		case ev := <-w.Events:
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() && !skipDir(fi.Name()) {
					_ = addTree(w, ev.Name)
				}
			}
			if ev.Op == fsnotify.Chmod {
				continue
			}
			c := classify(src, dir, ev.Name)
			if c == 0 {
				continue
			}
			if pending == 0 {
				since = time.Now()
			}
			pending |= c
			if rel, err := filepath.Rel(src, ev.Name); err == nil && !slices.Contains(files, rel) && len(files) < 10 {
				files = append(files, rel)
			}
			timer.Reset(debounce)
		case <-timer.C:
			s.reload(ctx, pending, since, files)
			pending, files = 0, nil
		}
	}
}

// reload acts on one batch of changes.
func (s *supervisor) reload(ctx context.Context, c change, since time.Time, files []string) {
	log := s.log.With("changed", files)
	if c&changeInfra != 0 {
		if s.synth == "" {
			log.Warn("infra code changed: the templates are not re-synthesized here; restart make dev to apply it (a synth into the template directory is picked up without one)",
				"templates", s.templates)
		} else {
			log.Info("infra code changed: re-synthesizing the templates", "command", s.synth)
			cmd := exec.CommandContext(ctx, "sh", "-c", s.synth)
			cmd.Dir, cmd.Stdout, cmd.Stderr = s.src, os.Stderr, os.Stderr
			if err := cmd.Run(); err != nil {
				log.Error("synth failed; the last good templates keep serving", "error", err.Error())
				return
			}
			c |= changeTemplates
		}
	}
	if c&(changeCode|changeTemplates) == 0 {
		return
	}
	bin, sum := s.bin, s.sum
	var built time.Duration
	if c&changeCode != 0 {
		t0 := time.Now()
		s.builds++
		out := filepath.Join(s.tmp, fmt.Sprintf("local-%d", s.builds))
		// -trimpath keeps the build cache shared with copies of the tree
		// (a package's cache key then leaves out its directory); without
		// DWARF the link is faster.
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, "./devtools/cmd/local")
		cmd.Dir = filepath.Join(s.src, "lambdas")
		var msg bytes.Buffer
		cmd.Stdout, cmd.Stderr = &msg, &msg
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "%s", msg.String())
			log.Error("build failed: the last good build keeps serving; fix and save to reload", "error", err.Error(), "compiler", strings.TrimSpace(msg.String()))
			return
		}
		built = time.Since(t0)
		ns, err := fileSum(out)
		if err != nil {
			log.Error("reading the new build", "error", err.Error())
			return
		}
		if ns == s.sum && c&changeTemplates == 0 && s.child != nil {
			os.Remove(out)
			log.Info("rebuilt: the program did not change, nothing to restart", "build_ms", built.Milliseconds())
			return
		}
		bin, sum = out, ns
	}
	var tables map[string]string
	if c&changeTemplates != 0 {
		tmpls, err := cfntables.LoadDir(s.templates)
		if err != nil {
			log.Error("templates unreadable; the last good server keeps serving", "error", err.Error())
			return
		}
		tables = tableDefs(tmpls)
		for id, def := range tables {
			if old, ok := s.tables[id]; ok && old != def {
				log.Warn("a table's definition changed: DynamoDB Local keeps the table as it was created; restart make dev to recreate it (its data is then lost)", "table", id)
			}
		}
	}
	prevBin, prevSum := s.bin, s.sum
	s.bin, s.sum = bin, sum
	t1 := time.Now()
	next, err := s.start(ctx)
	if err != nil {
		s.bin, s.sum = prevBin, prevSum
		if bin != prevBin {
			os.Remove(bin)
		}
		log.Error("the new server did not start: the last good one keeps serving", "error", err.Error())
		return
	}
	old := s.child
	s.child = next
	s.stop(old)
	if old != nil && prevBin != bin && strings.HasPrefix(prevBin, s.tmp) {
		os.Remove(prevBin)
	}
	if tables != nil {
		s.tables = tables
	}
	log.Info("reloaded", "save_to_serving_ms", time.Since(since).Milliseconds(), "build_ms", built.Milliseconds(), "start_ms", time.Since(t1).Milliseconds())
}

// start runs a child on the supervisor's socket and waits for its ready line.
func (s *supervisor) start(ctx context.Context) (*child, error) {
	cmd := exec.Command(s.bin, s.args...)
	cmd.Env, cmd.Stderr, cmd.ExtraFiles = s.env, os.Stderr, []*os.File{s.listener}
	// Its own process group: Ctrl-C reaches the supervisor alone, which
	// stops the child in order; the parent-death signal stops it should
	// the supervisor be killed, so no child keeps serving the socket.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, ready: make(chan struct{}), exited: make(chan struct{})}
	var once sync.Once
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			fmt.Println(sc.Text())
			if strings.HasPrefix(sc.Text(), readyLine) {
				once.Do(func() { close(c.ready) })
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		c.err = cmd.Wait()
		close(c.exited)
	}()
	select {
	case <-c.ready:
		return c, nil
	case <-c.exited:
		return nil, fmt.Errorf("exited before serving: %s", errString(c.err))
	case <-ctx.Done():
		s.stop(c)
		return nil, ctx.Err()
	case <-time.After(childStartTimeout):
		s.stop(c)
		return nil, fmt.Errorf("not serving after %s", childStartTimeout)
	}
}

// stop asks a child to finish its requests and waits for it.
func (s *supervisor) stop(c *child) {
	if c == nil {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(15 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.exited
	}
}

// tableDefs is every table's creation input by stack and logical id, to
// tell a changed definition (which KeepExisting does not apply) from a
// new table.
func tableDefs(tmpls []*cfntables.Template) map[string]string {
	out := map[string]string{}
	for _, t := range tmpls {
		tables, err := t.Tables()
		if err != nil {
			continue
		}
		for _, tbl := range tables {
			b, _ := json.Marshal(tbl.Input)
			out[t.Stack+"/"+tbl.LogicalID] = string(b)
		}
	}
	return out
}

func fileSum(path string) ([32]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return [32]byte{}, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return [32]byte{}, err
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum, nil
}

func errString(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}
