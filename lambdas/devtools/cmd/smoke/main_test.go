package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStakToken: the command reads Stak's token from the environment, a
// file or standard input, and refuses it as a flag value before it
// prints anything of it. Run against a local URL where nothing answers:
// every service fails its first request at once, and Stak's first check
// ("end-user token", which reads the token's claims) says whether the
// token arrived.
func TestStakToken(t *testing.T) {
	payload := base64.RawURLEncoding.EncodeToString([]byte(`{"tenant":"smoke","sub":"smoke-user"}`))
	tok := "eyJhbGciOiJSUzI1NiJ9." + payload + ".c2lnbmF0dXJl"
	srv := httptest.NewServer(nil)
	nowhere := srv.URL
	srv.Close()
	dir := t.TempDir()
	file := filepath.Join(dir, "token")
	require.NoError(t, os.WriteFile(file, []byte(tok+"\n"), 0o600))
	shared := filepath.Join(dir, "shared")
	require.NoError(t, os.WriteFile(shared, []byte(tok+"\n"), 0o600))
	require.NoError(t, os.Chmod(shared, 0o644))

	for _, tt := range []struct {
		name  string
		args  []string
		env   map[string]string
		stdin string
		code  int
		want  string
	}{
		{"environment", nil, map[string]string{"STAK_TOKEN": tok}, "", 1, "ok   stak: end-user token"},
		{"file", []string{"-stak-token-file", file}, nil, "", 1, "ok   stak: end-user token"},
		{"STAK_TOKEN_FILE", nil, map[string]string{"STAK_TOKEN_FILE": file}, "", 1, "ok   stak: end-user token"},
		{"standard input", []string{"-stak-token-stdin"}, nil, tok + "\n", 1, "ok   stak: end-user token"},
		{"STAK_TOKEN_FILE=-", nil, map[string]string{"STAK_TOKEN_FILE": "-"}, tok, 1, "ok   stak: end-user token"},
		{"none", nil, nil, "", 1, "FAIL stak: end-user token: no Stak end-user token (make smoke STAGE=…: STAK_TOKEN_FILE="},
		{"flag value", []string{"-stak-token", tok}, nil, "", 2, "smoke: -stak-token: the Stak token is not taken on the command line"},
		{"flag=value", []string{"-stak-token=" + tok}, nil, "", 2, "give it as STAK_TOKEN_FILE=<path>"},
		{"file others can read", []string{"-stak-token-file", shared}, nil, "", 2, "smoke: the Stak token file " + shared + " can be read by other users (mode 0644): chmod 600"},
		{"two places", []string{"-stak-token-file", file}, map[string]string{"STAK_TOKEN": tok}, "", 2, "smoke: the Stak token is given 2 times"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			args := append([]string{"-local", nowhere, "-wait", "1ms"}, tt.args...)
			code := run(context.Background(), args, func(k string) string { return tt.env[k] }, strings.NewReader(tt.stdin), &out, &out)
			assert.Equal(t, tt.code, code, "exit code:\n%s", out.String())
			assert.Contains(t, out.String(), tt.want, "output")
			assert.NotContains(t, out.String(), payload, "the output prints the token")
		})
	}
}
