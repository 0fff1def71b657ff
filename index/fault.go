package index

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// The files of a generation are mapped into memory. A file that shrinks
// while mapped (truncated on disk, a failing device) makes the next read of
// a page past its end a SIGBUS, which kills the process unless the
// goroutine asked for a panic instead. Every lookup and search of a
// Generation runs under recoverFault: such a fault becomes an error of that
// call, and the server goes on. So do the panics of bleve and bbolt on
// damaged bytes (slice bounds, bbolt's assertions), which only a
// generation without checksums can carry past Open.
//
// A fault can strike while bbolt or bleve hold a lock (bbolt reads its meta
// page under its meta lock), which then stays taken: after the first fault
// the generation is marked faulted, every later call fails at once, and
// Close leaves the stores alone. Live replaces a faulted generation at its
// next poll (see Reload).
//
//	func (g *Generation) Profile(id string) (p *companydocs.Profile, err error) {
//		defer recoverFault(&err, g, debug.SetPanicOnFault(true))
//
// The panic-on-fault setting is per goroutine; bleve and bbolt read the
// files on the calling goroutine.

// recoverFault restores the panic-on-fault setting and turns a memory
// fault or a runtime error or assertion of the stores into err. Other
// panics go on.
func recoverFault(err *error, g *Generation, old bool) {
	debug.SetPanicOnFault(old)
	r := recover()
	if r == nil {
		return
	}
	g.faulted.Store(true)
	if f, ok := r.(interface{ Addr() uintptr }); ok {
		*err = fmt.Errorf("index generation %s: memory fault reading a mapped file (was it changed on disk?): %v", g.ID(), f)
		return
	}
	switch r.(type) {
	case runtime.Error, string:
		*err = fmt.Errorf("index generation %s: reading the stores failed (a damaged file?): %v", g.ID(), r)
		return
	}
	panic(r)
}

// faultText says what a recovered panic was; a memory fault names its
// address, which the runtime's message does not.
func faultText(r any) string {
	if f, ok := r.(interface{ Addr() uintptr }); ok {
		return fmt.Sprintf("memory fault at %#x", f.Addr())
	}
	return fmt.Sprint(r)
}

// usable fails once a call on the generation has faulted.
func (g *Generation) usable() error {
	if g.faulted.Load() {
		return fmt.Errorf("index generation %s failed reading its files earlier and is no longer used", g.ID())
	}
	return nil
}

// Faulted reports whether a call on the generation faulted (see
// recoverFault).
func (g *Generation) Faulted() bool { return g.faulted.Load() }
