// Command ddblocal runs a command against one DynamoDB Local: it starts the
// server, runs the command with AWS_ENDPOINT_URL_DYNAMODB naming it, stops
// the server and exits with the command's status.
//
//	go run ./devtools/cmd/ddblocal -- go test ./...
//
// make test runs every test package this way: the packages share one
// server instead of each starting its own Java process (testenv uses an
// endpoint it is given), and every test's tables have names of their own.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/dynastack/dynastack/lambdas/devtools/ddblocal"
)

func main() {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: ddblocal -- <command> [args...]")
		os.Exit(2)
	}
	os.Exit(run(args))
}

func run(args []string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	srv, err := ddblocal.Start(ctx, ddblocal.Options{})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ddblocal:", err)
		return 1
	}
	defer srv.Close()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), ddblocal.EnvEndpoint+"="+srv.Endpoint)
	// An interrupt reaches the command through the terminal's process
	// group; this process only waits for it, then stops the server.
	signal.Ignore(syscall.SIGINT)
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		fmt.Fprintln(os.Stderr, "ddblocal:", err)
		return 1
	}
	return 0
}
