package kafka

import (
	"bytes"
	"errors"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// TestKafkaCompressionFrames pins what the frame walkers read from
// headers alone: the largest zstd window over every frame (a second frame
// may declare more than the first), a frame of one segment counted by its
// content size, skippable frames passed over, and lz4's largest block
// size (franz-go's default writer: 4 MiB); cut or legacy frames are
// errFraming, windows above MaxZstdWindow errWindowTooLarge.
func TestKafkaCompressionFrames(t *testing.T) {
	data := bytes.Repeat([]byte("pystream "), 4000)
	stream := func(window int) []byte {
		var b bytes.Buffer
		w, err := zstd.NewWriter(&b, zstd.WithWindowSize(window))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write(data)
		_ = w.Close()
		return b.Bytes()
	}
	// klauspost's writer (franz-go's) writes a batch as one segment: its
	// content size is its window.
	small, large := stream(64<<10), zstdHeader(21)
	skippable := []byte{0x50, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 1, 2, 3}
	enc, _ := zstd.NewWriter(nil)
	single := enc.EncodeAll([]byte("short"), nil)
	for _, tc := range []struct {
		name string
		src  []byte
		want int64
		err  error
	}{
		{"empty", nil, 0, nil},
		{"franz-go's writer", small, int64(len(data)), nil},
		{"the larger of two frames", append(append([]byte{}, small...), large...), 2 << 20, nil},
		{"skippable then a frame", append(append([]byte{}, skippable...), small...), int64(len(data)), nil},
		{"one segment of 5 bytes", single, zstd.MinWindowSize, nil},
		{"cut", small[:len(small)-3], 0, errFraming},
		{"above the cap", zstdHeader(26), 0, errWindowTooLarge},
	} {
		got, err := zstdWindow(tc.src)
		if !errors.Is(err, tc.err) || (err == nil && got != tc.want) {
			t.Errorf("zstd %s: %d, %v; want %d, %v", tc.name, got, err, tc.want, tc.err)
		}
	}

	lz := func(opts ...lz4.Option) []byte {
		var b bytes.Buffer
		w := lz4.NewWriter(&b)
		if err := w.Apply(opts...); err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write(data)
		_ = w.Close()
		return b.Bytes()
	}
	def, blocks64 := lz(), lz(lz4.BlockSizeOption(lz4.Block64Kb), lz4.BlockChecksumOption(true))
	for _, tc := range []struct {
		name string
		src  []byte
		want int64
		err  error
	}{
		{"the default writer", def, 4 << 20, nil},
		{"64 KiB blocks with checksums", blocks64, 64 << 10, nil},
		{"the larger of two frames", append(append([]byte{}, blocks64...), def...), 4 << 20, nil},
		{"cut", def[:len(def)-5], 0, errFraming},
		{"legacy", []byte{0x02, 0x21, 0x4C, 0x18, 0, 0, 0, 0}, 0, errFraming},
	} {
		got, err := lz4BlockSize(tc.src)
		if !errors.Is(err, tc.err) || (err == nil && got != tc.want) {
			t.Errorf("lz4 %s: %d, %v; want %d, %v", tc.name, got, err, tc.want, tc.err)
		}
	}
}

// zstdHeader is a zstd frame header declaring a window of 1<<log bytes and
// an empty last raw block.
func zstdHeader(log int) []byte {
	return []byte{0x28, 0xB5, 0x2F, 0xFD, 0x00, byte(log-10) << 3, 1, 0, 0}
}

// FuzzZstdWindow: the walkers never panic, and what they accept the
// decoder is charged for: a window at most MaxZstdWindow, a block size
// at most 4 MiB.
func FuzzZstdWindow(f *testing.F) {
	f.Add([]byte{})
	f.Add(zstdHeader(20))
	f.Add(zstdHeader(30))
	f.Add([]byte{0x04, 0x22, 0x4D, 0x18, 0x64, 0x70, 0xB9, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, src []byte) {
		if w, err := zstdWindow(src); err == nil && (w < 0 || w > MaxZstdWindow) {
			t.Fatalf("window %d accepted", w)
		}
		if b, err := lz4BlockSize(src); err == nil && (b < 0 || b > 4<<20) {
			t.Fatalf("block size %d accepted", b)
		}
	})
}
