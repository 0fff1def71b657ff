package ingest

import (
	"io"
	"sync"
)

const (
	asyncBlockSize = 256 << 10
	asyncBlocks    = 8
)

// asyncReader reads its source in a goroutine into a small ring of blocks,
// so that a slow decompressor (bzip2) runs while the consumer parses.
type asyncReader struct {
	full  chan asyncBlock
	free  chan []byte
	done  chan struct{}
	once  sync.Once
	cur   []byte
	spare []byte
	err   error
}

type asyncBlock struct {
	data []byte
	err  error
}

func newAsyncReader(src io.Reader) *asyncReader {
	a := &asyncReader{
		full: make(chan asyncBlock, asyncBlocks),
		free: make(chan []byte, asyncBlocks+1),
		done: make(chan struct{}),
	}
	for range asyncBlocks {
		a.free <- make([]byte, asyncBlockSize)
	}
	go a.fill(src)
	return a
}

// fill runs in its own goroutine until the source ends or Close is called.
func (a *asyncReader) fill(src io.Reader) {
	defer close(a.full)
	for {
		var buf []byte
		select {
		case buf = <-a.free:
		case <-a.done:
			return
		}
		n, err := readBlock(src, buf)
		select {
		case a.full <- asyncBlock{data: buf[:n], err: err}:
		case <-a.done:
			return
		}
		if err != nil {
			return
		}
	}
}

// Read implements io.Reader.
func (a *asyncReader) Read(p []byte) (int, error) {
	for len(a.cur) == 0 {
		if a.err != nil {
			return 0, a.err
		}
		if a.spare != nil {
			a.free <- a.spare[:cap(a.spare)]
			a.spare = nil
		}
		b, ok := <-a.full
		if !ok {
			return 0, io.EOF
		}
		a.cur, a.spare, a.err = b.data, b.data, b.err
	}
	n := copy(p, a.cur)
	a.cur = a.cur[n:]
	return n, nil
}

// Close stops the goroutine.
func (a *asyncReader) Close() error {
	a.once.Do(func() { close(a.done) })
	return nil
}

// readBlock fills buf unless the source ends or fails first. Unlike
// io.ReadFull it passes the source's error through unchanged, so that a
// truncated stream (io.ErrUnexpectedEOF from the decompressor) stays an error.
func readBlock(src io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := src.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
