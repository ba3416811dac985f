package synth

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dynastack/dynastack/infra/config"
)

// DeployContext names the stages a deploy is for (comma-separated):
// `make deploy STAGE=prod` passes -c dynastack:deploy=prod.
const DeployContext = "dynastack:deploy"

// DeployingStages returns the stages a `cdk deploy` is about to deploy, nil
// when the app runs for anything else (synth, diff, tests), which must keep
// working offline with the placeholder settings. The context value wins; a
// bare `cdk deploy` is recognised among the app's ancestor processes (the
// CDK CLI runs the app, through `go run`), its stack selectors naming the
// stages ('prod/*', 'prod/itsm', '*/itsm', --all). The CLI tells the app
// nothing else about its command.
func DeployingStages(contextValue string, ancestors [][]string, stages []string) ([]string, error) {
	if contextValue != "" {
		var out []string
		for _, s := range strings.Split(contextValue, ",") {
			s = strings.TrimSpace(s)
			if !slices.Contains(stages, s) {
				return nil, fmt.Errorf("-c %s=%s: %q is not a stage; use one of %s", DeployContext, contextValue, s, strings.Join(stages, ", "))
			}
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		return out, nil
	}
	for _, argv := range ancestors {
		i := slices.IndexFunc(argv, func(a string) bool { return filepath.Base(a) == "cdk" })
		if i < 0 {
			continue
		}
		j := slices.Index(argv[i+1:], "deploy")
		if j < 0 {
			return nil, nil // the CLI runs the app for another command
		}
		var out []string
		for _, a := range argv[i+1+j+1:] {
			var patterns []string
			switch {
			case a == "--all" || a == "*" || a == "**":
				patterns = []string{"*"}
			case strings.Contains(a, "/") && !strings.HasPrefix(a, "-"):
				patterns = []string{strings.SplitN(a, "/", 2)[0]}
			}
			for _, p := range patterns {
				for _, s := range stages {
					if ok, _ := path.Match(p, s); ok && !slices.Contains(out, s) {
						out = append(out, s)
					}
				}
			}
		}
		return out, nil
	}
	return nil, nil
}

// Preflight refuses a deploy of a stage whose settings are still
// placeholders or missing: one line per setting, naming where to set it.
// It runs in the app before any stack is built, so the CLI never reaches
// CloudFormation.
func Preflight(stages []config.Stage, deploying []string) error {
	var lines []string
	for _, s := range stages {
		if slices.Contains(deploying, string(s.Name)) {
			lines = append(lines, s.DeployProblems()...)
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return errors.New(strings.Join(lines, "\n"))
}

// Ancestors returns the argument lists of the process's ancestors, nearest
// first (at most 8): /proc where it exists, else ps. A process it cannot
// read ends the walk.
func Ancestors() [][]string {
	var out [][]string
	pid := os.Getppid()
	for range 8 {
		if pid <= 1 {
			break
		}
		argv, ppid, ok := processInfo(pid)
		if !ok {
			break
		}
		out = append(out, argv)
		pid = ppid
	}
	return out
}

func processInfo(pid int) (argv []string, ppid int, ok bool) {
	if raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return nil, 0, false
		}
		// pid (comm) state ppid …: comm may hold spaces, so read after ')'.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) < 2 {
			return nil, 0, false
		}
		ppid, _ = strconv.Atoi(fields[1])
		return strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00"), ppid, true
	}
	out, err := exec.Command("ps", "-o", "ppid=", "-o", "args=", "-p", strconv.Itoa(pid)).Output()
	if err != nil {
		return nil, 0, false
	}
	fields := strings.Fields(string(out))
	if len(fields) < 2 {
		return nil, 0, false
	}
	ppid, _ = strconv.Atoi(fields[0])
	return fields[1:], ppid, true
}
