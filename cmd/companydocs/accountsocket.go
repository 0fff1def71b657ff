package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"

	"companydocs"
	"companydocs/messages"
	"companydocs/ordering"
)

// The accounts commands reach a running server through its store socket
// (store.sock, mode 0600, the peer's uid checked): the server holds the
// data directory's lock and bbolt's, so no other process may open
// orders.db, and its own Accounts make the change, so that a new key or a
// new balance counts at once.

// accountRequest is the body of POST /accounts and POST /accounts/credit
// on the store socket.
type accountRequest struct {
	Name    string `json:"name"`
	Role    string `json:"role,omitempty"`
	Credits int64  `json:"credits,omitempty"` // starting credits of a new account
	Add     int64  `json:"add,omitempty"`     // credits to add, negative to take away
}

// createdAccount is the answer to a create, and what create --json prints.
type createdAccount struct {
	Name    string `json:"name"`
	APIKey  string `json:"api_key"`
	Credits int64  `json:"credits"`
	Role    string `json:"role"`
}

// maxAccountRequest bounds a request body on the socket.
const maxAccountRequest = 4096

// serveAccounts adds the accounts commands to the store socket's routes.
func serveAccounts(mux *http.ServeMux, accounts *ordering.Accounts, logger *slog.Logger) {
	mux.HandleFunc("POST /accounts", ownerOnly(func(w http.ResponseWriter, r *http.Request) {
		var req accountRequest
		if !decodeAccountRequest(w, r, &req) {
			return
		}
		key, err := accounts.CreateAccountWithRole(req.Name, req.Role, req.Credits)
		if err != nil {
			answerAccountError(w, err, logger)
			return
		}
		logger.Info("account created through the store socket", "account", req.Name, "role", req.Role, "credits", req.Credits)
		writeSocketJSON(w, http.StatusCreated, createdAccount{Name: req.Name, APIKey: key, Credits: req.Credits, Role: req.Role})
	}))
	mux.HandleFunc("POST /accounts/credit", ownerOnly(func(w http.ResponseWriter, r *http.Request) {
		var req accountRequest
		if !decodeAccountRequest(w, r, &req) {
			return
		}
		if err := accounts.AddCredits(req.Name, req.Add); err != nil {
			answerAccountError(w, err, logger)
			return
		}
		logger.Info("credits changed through the store socket", "account", req.Name, "add", req.Add)
		writeSocketJSON(w, http.StatusOK, struct{}{})
	}))
	mux.HandleFunc("GET /accounts", ownerOnly(func(w http.ResponseWriter, r *http.Request) {
		list, err := accounts.All()
		if err != nil {
			answerAccountError(w, err, logger)
			return
		}
		writeSocketJSON(w, http.StatusOK, list)
	}))
}

// ownerOnly refuses a peer that is neither the server's user nor root.
func ownerOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !sameUser(r) {
			http.Error(w, "Only the server's user may administer its accounts.", http.StatusForbidden)
			return
		}
		h(w, r)
	}
}

func decodeAccountRequest(w http.ResponseWriter, r *http.Request, req *accountRequest) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxAccountRequest))
	dec.DisallowUnknownFields()
	if err := dec.Decode(req); err != nil {
		http.Error(w, "The request is not an accounts request: "+err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

// answerAccountError says a refusal of the rules in their sentence; any
// other failure is logged and said in general words.
func answerAccountError(w http.ResponseWriter, err error, logger *slog.Logger) {
	if companydocs.ErrorCode(err) != companydocs.EINTERNAL {
		msg, _ := companydocs.ErrorMessageIn(err, messages.English)
		http.Error(w, msg, http.StatusUnprocessableEntity)
		return
	}
	logger.Error("accounts command on the store socket failed", "err", err)
	http.Error(w, "The server could not change its accounts; its log says why.", http.StatusInternalServerError)
}

func writeSocketJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// socketClient is an HTTP client whose every connection goes to the
// store socket of dataDir.
func socketClient(dataDir string) (*http.Client, string) {
	sock := filepath.Join(dataDir, storeSocketFile)
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}, sock
}

// noServer reports whether a request to the socket failed because no
// server listens: no socket, or one left by a server that was killed.
func noServer(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED)
}

// askServer sends one accounts request to the server running on dataDir
// and decodes its answer into out. online is false, with no error, when
// no server listens; the caller then works on orders.db itself.
func askServer(ctx context.Context, dataDir, method, path string, body, out any) (online bool, err error) {
	client, sock := socketClient(dataDir)
	var payload io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return false, err
		}
		payload = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://store"+path, payload)
	if err != nil {
		return false, err
	}
	resp, err := client.Do(req)
	if noServer(err) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("ask the server on %s: %w", sock, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return true, errors.New(strings.TrimSpace(string(msg)))
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return true, fmt.Errorf("read the answer of the server on %s: %w", sock, err)
	}
	return true, nil
}
