package bbolt

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
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"companydocs"
	"companydocs/messages"
	"companydocs/ordering"
)

// The store socket: a server on orders.db serves it in the data
// directory, for the store and accounts commands run beside it; this file
// holds both its server and its client.

// SocketFile is the unix socket in the data directory on which a
// running server hands out consistent copies of orders.db: bbolt's lock
// keeps every other process out of the file while the server runs.
const SocketFile = "store.sock"

// The accounts commands reach a running server through its store socket
// (store.sock, mode 0600, the peer's uid checked): the server holds the
// data directory's lock and bbolt's, so no other process may open
// orders.db, and its own Accounts make the change, so that a new key or a
// new balance counts at once.

// AccountRequest is the body of POST /accounts and POST /accounts/credit
// on the store socket.
type AccountRequest struct {
	Name    string `json:"name"`
	Role    string `json:"role,omitempty"`
	Credits int64  `json:"credits,omitempty"` // starting credits of a new account
	Add     int64  `json:"add,omitempty"`     // credits to add, negative to take away
}

// CreatedAccount is the answer to a create, and what create --json prints.
type CreatedAccount struct {
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
		var req AccountRequest
		if !decodeAccountRequest(w, r, &req) {
			return
		}
		key, err := accounts.CreateAccountWithRole(req.Name, req.Role, req.Credits)
		if err != nil {
			answerAccountError(w, err, logger)
			return
		}
		logger.Info("account created through the store socket", "account", req.Name, "role", req.Role, "credits", req.Credits)
		writeSocketJSON(w, http.StatusCreated, CreatedAccount{Name: req.Name, APIKey: key, Credits: req.Credits, Role: req.Role})
	}))
	mux.HandleFunc("POST /accounts/credit", ownerOnly(func(w http.ResponseWriter, r *http.Request) {
		var req AccountRequest
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

func decodeAccountRequest(w http.ResponseWriter, r *http.Request, req *AccountRequest) bool {
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
	sock := filepath.Join(dataDir, SocketFile)
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}, sock
}

// noServer reports whether a request to the socket failed because no
// server listens: no socket, or one left by a server that was killed.
func noServer(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED)
}

// AskServer sends one accounts request to the server running on dataDir
// and decodes its answer into out. online is false, with no error, when
// no server listens; the caller then works on orders.db itself.
func AskServer(ctx context.Context, dataDir, method, path string, body, out any) (online bool, err error) {
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

// CopyFromServer asks a running server for a copy of its database. It
// returns false, and no error, when no server listens.
func CopyFromServer(ctx context.Context, dataDir string, w io.Writer) (bool, error) {
	client, sock := socketClient(dataDir)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://store/backup", nil)
	if err != nil {
		return false, err
	}
	resp, err := client.Do(req)
	if noServer(err) {
		return false, nil // no server, or one that was killed and left its socket
	} else if err != nil {
		return false, fmt.Errorf("ask the server on %s for a copy: %w", sock, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return false, fmt.Errorf("the server on %s could not copy its database: %s", sock, msg)
	}
	n, err := io.Copy(w, resp.Body)
	if err != nil {
		return false, fmt.Errorf("copy from the server on %s: %w", sock, err)
	}
	if n != resp.ContentLength {
		return false, fmt.Errorf("copy from the server on %s: got %d of %d bytes", sock, n, resp.ContentLength)
	}
	return true, nil
}

// Socket serves consistent copies of the order database to "store
// backup" and "store check", and the accounts commands,
// on a unix socket only the server's user may use (mode 0600, and the
// peer's uid is checked).
type Socket struct {
	srv  *http.Server
	path string
}

// ListenSocket starts the socket. The caller holds orders.db's lock, so a
// socket file left there belongs to a server that is gone.
func ListenSocket(dataDir string, db *DB, accounts *ordering.Accounts, logger *slog.Logger) (*Socket, error) {
	path := filepath.Join(dataDir, SocketFile)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("remove stale %s: %w", path, err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /backup", func(w http.ResponseWriter, r *http.Request) {
		if !sameUser(r) {
			http.Error(w, "only the server's user may copy its database", http.StatusForbidden)
			return
		}
		serveBackup(w, db, logger)
	})
	serveAccounts(mux, accounts, logger)
	s := &Socket{path: path, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, peerKey{}, c) }}}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("store socket stopped", "path", path, "err", err)
		}
	}()
	return s, nil
}

func serveBackup(w http.ResponseWriter, db *DB, logger *slog.Logger) {
	start := time.Now()
	err := db.Snapshot(func(size int64, db io.WriterTo) error {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
		_, err := db.WriteTo(w)
		return err
	})
	if err != nil {
		logger.Error("copy of the order database failed", "err", err)
		return // the client sees a short body
	}
	logger.Info("copied the order database for a backup or check", "took", time.Since(start))
}

type peerKey struct{}

// sameUser reports whether the peer of r runs as the server's user or root.
func sameUser(r *http.Request) bool {
	c, ok := r.Context().Value(peerKey{}).(*net.UnixConn)
	if !ok {
		return false
	}
	raw, err := c.SyscallConn()
	if err != nil {
		return false
	}
	var cred *syscall.Ucred
	_ = raw.Control(func(fd uintptr) {
		cred, err = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	})
	return err == nil && cred != nil && (cred.Uid == uint32(os.Getuid()) || cred.Uid == 0)
}

// Close stops the socket and removes its file.
func (s *Socket) Close() error {
	if s == nil {
		return nil
	}
	err := s.srv.Close()
	if rmErr := os.Remove(s.path); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
		err = errors.Join(err, rmErr)
	}
	return err
}
