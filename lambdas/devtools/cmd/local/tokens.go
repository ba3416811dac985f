package main

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/devtools/jwtauth"
	"github.com/dynastack/dynastack/lambdas/devtools/repo"
)

// keyFile is the local signing key of end-user tokens, made on first use
// and kept out of git: make dev verifies with it, make token signs with it.
const keyFile = ".dev/token-key.pem"

func localKey() (*jwtauth.Verifier, func(map[string]any) (string, error), error) {
	root, err := repo.Root("")
	if err != nil {
		return nil, nil, err
	}
	key, err := jwtauth.LoadOrCreateKey(filepath.Join(root, keyFile))
	if err != nil {
		return nil, nil, err
	}
	return &jwtauth.Verifier{Key: &key.PublicKey}, func(c map[string]any) (string, error) { return jwtauth.Sign(key, c) }, nil
}

// guard puts h behind the template's JWT authorizers as API Gateway does:
// their routes take only a valid token of the authorizer's issuer and
// audience signed with the local key, and the claims reach h as the
// gateway passes them.
func guard(t *cfntables.Template, h http.Handler) (http.Handler, []string, error) {
	auths, err := t.JWTAuthorizers()
	if err != nil || len(auths) == 0 {
		return h, nil, err
	}
	v, _, err := localKey()
	if err != nil {
		return nil, nil, err
	}
	var routes []string
	for _, a := range auths {
		verifier := *v
		verifier.Issuer, verifier.Audience = a.Issuer, a.Audience[0]
		h = jwtauth.Middleware(verifier, a.Routes, h)
		routes = append(routes, a.Routes...)
	}
	return h, routes, nil
}

// runToken is `local token`: it prints a token of the local key for the
// first JWT authorizer of the templates (make token TENANT=… USER=…).
func runToken(args []string) error {
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	tenant := fs.String("tenant", "", "the tenant claim (required)")
	user := fs.String("user", "", "the sub claim: the user's uid (required)")
	ttl := fs.Duration("ttl", time.Hour, "lifetime of the token")
	dir := fs.String("templates", "", "directory of *.template.json (default cdk.out/assembly-dev, else test/snapshots/dev)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *tenant == "" || *user == "" {
		return errors.New("usage: make token TENANT=<tenant> USER=<uid>")
	}
	if *dir == "" {
		root, err := repo.Root("")
		if err != nil {
			return err
		}
		*dir = filepath.Join(root, "cdk.out", "assembly-dev")
		if _, err := os.Stat(*dir); err != nil {
			*dir = filepath.Join(root, "test", "snapshots", "dev")
		}
	}
	tmpls, err := cfntables.LoadDir(*dir)
	if err != nil {
		return err
	}
	for _, t := range tmpls {
		auths, err := t.JWTAuthorizers()
		if err != nil {
			return err
		}
		if len(auths) == 0 {
			continue
		}
		_, sign, err := localKey()
		if err != nil {
			return err
		}
		now := time.Now()
		tok, err := sign(map[string]any{
			"iss": auths[0].Issuer, "aud": auths[0].Audience[0], "sub": *user, "tenant": *tenant,
			"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(*ttl).Unix(),
		})
		if err != nil {
			return err
		}
		fmt.Println(tok)
		return nil
	}
	return fmt.Errorf("no JWT authorizer in the templates of %s", *dir)
}
