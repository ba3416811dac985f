// Command smoke runs devtools/smoke: a short end-to-end check of every
// service against a deployed stage or the local runner (docs/smoke.md).
//
//	make smoke STAGE=stage STAK_TOKEN_FILE=<file holding a token of the stage's identity provider>
//	make smoke LOCAL=http://127.0.0.1:8080
//
// The Stak token comes from a file, standard input or the environment
// (devtools/bearer), never from the command line: -stak-token is refused.
//
// It prints one line per check and exits 0 when every check passed, 1
// naming each failed check, 2 when it could not start (usage, no AWS
// credentials or region, a stack or its ApiUrl output missing).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"

	"github.com/dynastack/dynastack/lambdas/devtools/bearer"
	"github.com/dynastack/dynastack/lambdas/devtools/smoke"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}

// urlFlags are -url service=URL overrides, repeatable.
type urlFlags map[string]string

func (u urlFlags) String() string { return fmt.Sprint(map[string]string(u)) }

func (u urlFlags) Set(v string) error {
	svc, url, ok := strings.Cut(v, "=")
	if !ok || !slices.Contains(smoke.Services, svc) || !strings.HasPrefix(url, "http") {
		return fmt.Errorf("%q: want <service>=<base URL>, service one of %s", v, strings.Join(smoke.Services, ", "))
	}
	u[svc] = url
	return nil
}

func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	// Before parsing: a flag error would print the token.
	if err := bearer.Stak.CheckArgs(args); err != nil {
		fmt.Fprintln(stderr, "smoke:", err)
		return 2
	}
	fs := flag.NewFlagSet("smoke", flag.ContinueOnError)
	fs.SetOutput(stderr)
	local := fs.String("local", "", "the local runner's URL (make dev's, e.g. http://127.0.0.1:8080): no signature")
	stage := fs.String("stage", "", "a deployed stage: URLs from the ApiUrl outputs of its stacks <service>-<stage>, requests signed with SigV4 (AWS credentials and region from the environment, as the AWS CLI reads them)")
	region := fs.String("region", "", "AWS region of the stage (default: AWS_REGION / the profile's)")
	// An end-user token for Stak's JWT routes; its tenant and sub claims
	// name the tenant and user the check publishes to.
	tokenFlags := bearer.Stak.Flags(fs)
	wait := fs.Duration("wait", 60*time.Second, "bound of each wait for an eventually consistent list or rez_agent's delivery")
	urls := urlFlags{}
	fs.Var(urls, "url", "override one service's base URL: <service>=<URL> (repeatable)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if (*local == "") == (*stage == "") || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: smoke -local <make dev URL> | -stage <stage> [-stak-token-file <path> | -stak-token-stdin] [-region <region>] [-url <service>=<URL>]\n(the Stak token: "+bearer.Stak.Ways()+")")
		return 2
	}
	token, err := tokenFlags.Read(getenv, stdin)
	if err != nil {
		fmt.Fprintln(stderr, "smoke:", err)
		return 2
	}
	target := smoke.Target{StakToken: token, Wait: *wait}
	if *local != "" {
		target.URLs = smoke.LocalURLs(*local)
	} else {
		var opts []func(*config.LoadOptions) error
		if *region != "" {
			opts = append(opts, config.WithRegion(*region))
		}
		cfg, err := config.LoadDefaultConfig(ctx, opts...)
		if err == nil && cfg.Region == "" {
			err = errors.New("no AWS region: set AWS_REGION (or -region) to the stage's region")
		}
		if err == nil {
			_, err = cfg.Credentials.Retrieve(ctx)
		}
		if err != nil {
			fmt.Fprintln(stderr, "smoke:", err)
			return 2
		}
		// A stack that could not be read is fatal unless -url gives its
		// service's URL by hand.
		target.URLs, err = smoke.Discover(ctx, cloudformation.NewFromConfig(cfg), *stage)
		if err != nil && slices.ContainsFunc(smoke.Services, func(s string) bool { return target.URLs[s] == "" && urls[s] == "" }) {
			fmt.Fprintf(stderr, "smoke: stage %s: %v\n(is the stage deployed in %s? -url <service>=<URL> gives a URL by hand)\n", *stage, err, cfg.Region)
			return 2
		}
		target.HTTP = &http.Client{Timeout: 30 * time.Second, Transport: &smoke.Signer{Credentials: cfg.Credentials, Region: cfg.Region}}
	}
	for svc, u := range urls {
		target.URLs[svc] = u
	}
	rep := smoke.Run(ctx, target)
	fmt.Fprint(stdout, rep)
	if len(rep.Failed()) > 0 {
		return 1
	}
	return 0
}
