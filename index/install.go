package index

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"syscall"

	"companydocs"
	"companydocs/internal/atomicfile"
	"companydocs/internal/filesum"
)

// A node that follows published generations (cmd/companydocs, "publish
// and follow") downloads a generation's files into index/.download-NAME
// (DownloadDir), where a killed download is continued, and then installs
// it (Install): checked as a build is before it is published, renamed to
// index/NAME and pointed at by CURRENT, so that Live swaps it in as it
// swaps a local ingest's. A partial or damaged download is never renamed.

// downloadPrefix marks the directories downloads are written to.
const downloadPrefix = ".download-"

// DownloadDir returns the directory the generation name is downloaded
// into, made if missing.
func DownloadDir(dataDir, name string) (string, error) {
	if !validGenerationName(name) {
		return "", fmt.Errorf("%q is not a generation name", name)
	}
	dir := filepath.Join(indexDir(dataDir), downloadPrefix+name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create download dir: %w", err)
	}
	return dir, nil
}

// Install publishes the downloaded generation in dir (a DownloadDir):
// under the build lock (ErrBuildInProgress while an ingest builds), it
// checks every file against meta.json, the change record too, checks its
// bbolt files whole (openChecked) and opens the generation as a server
// would (verifyGeneration), renames it to its name and points
// CURRENT at it, then removes the generations beyond the newest keep and
// the downloads of other generations. A generation that fails the check
// is refused (a RejectError) and dir is left as it is.
func Install(dataDir, dir string, keep int) (Meta, error) {
	lock, ok, err := lockFile(filepath.Join(indexDir(dataDir), lockName), syscall.LOCK_EX)
	if err != nil {
		return Meta{}, err
	} else if !ok {
		return Meta{}, ErrBuildInProgress
	}
	defer lock.Close()
	m, err := ReadMeta(dir)
	if err != nil {
		return Meta{}, reject(RejectMeta, "downloaded generation: %w", err)
	}
	if !validGenerationName(m.ID) || filepath.Base(dir) != downloadPrefix+m.ID {
		return Meta{}, reject(RejectMeta, "the generation downloaded into %s calls itself %q", filepath.Base(dir), m.ID)
	}
	if _, err := sweepOrphan(dataDir); err != nil {
		return Meta{}, err
	}
	if err := verifyGeneration(dir, m, true); err != nil {
		return Meta{}, err
	}
	if err := publishDir(dataDir, dir, m.ID); err != nil {
		return Meta{}, err
	}
	if _, err := prune(dataDir, max(keep, 1)); err != nil {
		return m, err
	}
	return m, removeDownloads(dataDir, m.ID)
}

// removeDownloads deletes the download directories of generations other
// than keep (a download the publisher gave up for a newer one).
func removeDownloads(dataDir, keep string) error {
	entries, err := os.ReadDir(indexDir(dataDir))
	if err != nil {
		return fmt.Errorf("list index dir: %w", err)
	}
	var errs []error
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), downloadPrefix) && e.Name() != downloadPrefix+keep {
			errs = append(errs, os.RemoveAll(filepath.Join(indexDir(dataDir), e.Name())))
		}
	}
	return errors.Join(errs...)
}

// MetaFile is the name of a generation's meta.json, which lists its other
// files with their sizes and SHA-256.
const MetaFile = metaName

// FileChecksum returns the size and SHA-256 (hex) of the file at path,
// read once per process while the file is not written (internal/filesum).
func FileChecksum(path string) (int64, string, error) { return filesum.SHA256(path) }

// ProfilesFile is the name of a generation's profile store, or of its
// base when it has layers (IsProfileFile names them all).
const ProfilesFile = profilesName

// ProfileStore is the profile store of a downloaded generation on its
// own, read-only: a node that follows published generations looks a
// profile up in the newest one before it has swapped it in, so that an
// order for a company only that generation holds is not refused during a
// rollout.
type ProfileStore struct {
	store   *layeredStore
	name    string
	faulted atomic.Bool
}

// OpenProfileStore opens the profile store in dir, a generation or its
// download directory holding meta.json and the store's files
// (IsProfileFile; profiles.db alone without a meta.json), read-only,
// after checking every file whole
// (openChecked): its SHA-256 only says it is the file the publisher named.
// A damaged file, or a meta.json that names layers it cannot have, is a
// RejectError of RejectStructure or RejectMeta; a file that cannot be
// opened now is one of RejectOpen.
func OpenProfileStore(dir string) (*ProfileStore, error) {
	store, err := openProfileStore(dir)
	if err != nil {
		return nil, fmt.Errorf("open the profile store of %s: %w", filepath.Base(dir), err)
	}
	return &ProfileStore{store: store, name: filepath.Base(dir)}, nil
}

func openProfileStore(dir string) (*layeredStore, error) {
	meta, err := ReadMeta(dir)
	if errors.Is(err, fs.ErrNotExist) {
		meta = Meta{} // no meta.json, no layers: profiles.db alone, which Install refuses without it
	} else if err != nil {
		return nil, &RejectError{Reason: ioReason(err, RejectMeta), Err: err}
	}
	if err := checkLayers(meta); err != nil {
		return nil, err
	}
	store, err := openLayers(dir, profileFiles(meta), openChecked)
	if err != nil {
		return nil, err
	}
	if err := store.checkBuckets(); err != nil {
		return nil, errors.Join(err, store.close())
	}
	return store, nil
}

// Profile returns the profile id, nil when the store has none. A fault
// reading the mapped file (changed on disk after it was checked) is an
// error, and every later call fails at once (see fault.go).
func (s *ProfileStore) Profile(id string) (p *companydocs.Profile, err error) {
	if s.faulted.Load() {
		return nil, fmt.Errorf("the profile store of %s failed reading its file earlier and is no longer used", s.name)
	}
	defer func(old bool) {
		debug.SetPanicOnFault(old)
		if r := recover(); r != nil {
			s.faulted.Store(true)
			err = fmt.Errorf("the profile store of %s: reading the file failed (was it changed on disk?): %s", s.name, faultText(readFailure(r)))
		}
	}(debug.SetPanicOnFault(true))
	err = s.store.lookup(func(t storeTx) error {
		p, err = t.profile(id)
		return err
	})
	return p, err
}

// Close closes the store; after a fault it leaves the file mapped, since
// the fault may have left bbolt's locks taken (see fault.go).
func (s *ProfileStore) Close() error {
	if s.faulted.Load() {
		return fmt.Errorf("the profile store of %s faulted: it is left open", s.name)
	}
	return s.store.close()
}

// ShareInstalled puts into dir, a download directory, every file of want
// that a generation installed in dataDir holds with the same size and
// SHA-256 by its meta.json: hard linked where the file system allows (the
// files of a generation are never written again), copied otherwise. A file
// already in dir is left as it is. It returns the bytes put. Nothing is
// verified here: the download checks every file it keeps against want, as
// it checks what it fetches, so a local file damaged since is fetched
// anew. A generation being removed is skipped; a file that cannot be put
// is left to the download, and the error says why.
func ShareInstalled(dataDir, dir string, want []FileSum) (int64, error) {
	names, err := generationNames(dataDir)
	if err != nil {
		return 0, err
	}
	missing := map[FileSum][]string{} // by size and SHA-256: the paths wanted
	for _, w := range want {
		if !filepath.IsLocal(filepath.FromSlash(w.Path)) {
			continue // a damaged manifest: the download refuses it
		}
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(w.Path))); errors.Is(err, os.ErrNotExist) {
			key := FileSum{Size: w.Size, SHA256: w.SHA256}
			missing[key] = append(missing[key], w.Path)
		}
	}
	var put int64
	var errs []error
	for i := len(names) - 1; i >= 0 && len(missing) > 0; i-- {
		n, err := shareFrom(filepath.Join(indexDir(dataDir), names[i]), dir, missing)
		put += n
		errs = append(errs, err)
	}
	return put, errors.Join(errs...)
}

// shareFrom puts into dir the files of missing that the generation in src
// holds, and drops them from missing.
func shareFrom(src, dir string, missing map[FileSum][]string) (int64, error) {
	lock, ok, err := lockFile(filepath.Join(src, metaName), syscall.LOCK_SH)
	if err != nil || !ok {
		return 0, err // being removed: skipped
	}
	defer lock.Close()
	meta, err := ReadMeta(src)
	if err != nil {
		return 0, nil // not a generation to take files from
	}
	var put int64
	var errs []error
	for _, s := range meta.Files {
		key := FileSum{Size: s.Size, SHA256: s.SHA256}
		paths := missing[key]
		if len(paths) == 0 || !filepath.IsLocal(filepath.FromSlash(s.Path)) {
			continue
		}
		delete(missing, key)
		for _, p := range paths {
			if err := linkOrCopy(filepath.Join(src, filepath.FromSlash(s.Path)), filepath.Join(dir, filepath.FromSlash(p))); err != nil {
				errs = append(errs, fmt.Errorf("take %s from %s: %w", p, filepath.Base(src), err))
				continue
			}
			put += s.Size
		}
	}
	return put, errors.Join(errs...)
}

// linkOrCopy makes dst the file src: a hard link, or where the file system
// refuses one, a copy written as dst's partial download file (the name
// objectstore's Download continues) and renamed, so that a copy cut short
// is never taken for the whole file.
func linkOrCopy(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if os.Link(src, dst) == nil {
		return atomicfile.SyncDir(filepath.Dir(dst))
	}
	part := dst + ".part"
	if err := os.Remove(part); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := copyFileSynced(src, part); err != nil {
		return errors.Join(err, os.Remove(part))
	}
	if err := os.Rename(part, dst); err != nil {
		return err
	}
	return atomicfile.SyncDir(filepath.Dir(dst))
}
