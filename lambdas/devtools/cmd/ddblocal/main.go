// Command ddblocal runs a command against one DynamoDB Local: it starts the
// server, runs the command with AWS_ENDPOINT_URL_DYNAMODB naming it, stops
// the server and exits with the command's status.
//
//	go run ./devtools/cmd/ddblocal -- go test ./...
//
// make test runs every test package this way: the packages share one
// server instead of each starting its own Java process (testenv uses an
// endpoint it is given), and every test's tables have names of their own.
// The endpoint's port is the same on every run of a checkout, which lets
// Go's test cache reuse the results of unchanged packages.
package main

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/dynastack/dynastack/lambdas/devtools/ddblocal"
	"github.com/dynastack/dynastack/lambdas/devtools/repo"
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
	root, err := repo.Root("")
	if err != nil {
		fmt.Fprintln(os.Stderr, "ddblocal:", err)
		return 1
	}
	jar, _, err := ddblocal.FindJar(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ddblocal:", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	srv, err := ddblocal.Start(ctx, ddblocal.Options{Root: root, Port: stablePort(root)})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ddblocal:", err)
		return 1
	}
	defer srv.Close()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// The endpoint and the jar are inputs of every test that reads them
	// (testenv.Endpoint): Go's test cache keys a package's result on the
	// variables it read, so both must be the same from run to run for a
	// result to be reused, and a new DynamoDB Local must not reuse one.
	rel, _ := filepath.Rel(root, jar)
	cmd.Env = append(os.Environ(), ddblocal.EnvEndpoint+"="+srv.Endpoint, ddblocal.EnvJar+"="+rel)
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

// stablePort is the same port for the same checkout on every run, so that
// the endpoint the tests read does not change; a free one when another
// process holds it (then Go's test cache misses once, nothing worse).
func stablePort(root string) int {
	h := fnv.New32a()
	h.Write([]byte(root))
	port := 20000 + int(h.Sum32()%10000)
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return 0
	}
	ln.Close()
	return port
}
