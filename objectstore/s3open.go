package objectstore

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go/logging"
	gcaws "gocloud.dev/aws"
	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/s3blob"
)

// openBucket opens url as blob.OpenBucket does, on a mux of its own whose
// s3:// opener hands the AWS SDK log, a logger that writes to slog: the
// SDK's default writes plain "SDK ... WARN" lines to stderr, into the
// middle of the service's JSON log.
func openBucket(ctx context.Context, rawURL string, log *sdkLog) (*blob.Bucket, error) {
	mux := new(blob.URLMux)
	mux.RegisterBucket(fileblob.Scheme, &fileblob.URLOpener{})
	mux.RegisterBucket(s3blob.Scheme, s3Opener{log: log})
	return mux.OpenBucket(ctx, rawURL)
}

// s3Opener opens s3:// URLs as s3blob.URLOpener does (the same query
// parameters, the same defaults), with the SDK's logger set: s3blob's
// opener builds its client itself and takes none.
type s3Opener struct{ log *sdkLog }

func (o s3Opener) OpenBucketURL(ctx context.Context, u *url.URL) (*blob.Bucket, error) {
	q := u.Query()
	clientOpts, bucketOpts, err := s3Params(q)
	if err != nil {
		return nil, err
	}
	cfg, err := gcaws.V2ConfigFromURLParams(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("open bucket %q: %w", u.Host, err)
	}
	cfg.Logger = o.log
	clientOpts = append(clientOpts, func(opts *s3.Options) {
		// Every downloaded file is checked against its manifest's
		// SHA-256: the SDK's note that a response carried no checksum
		// it could validate (on every object of most S3-compatible
		// stores) says nothing an operator must act on.
		opts.DisableLogOutputChecksumValidationSkipped = true
	})
	client := s3.NewFromConfig(cfg, clientOpts...)
	// The upload manager takes the checksum setting from the bucket's
	// options, not from the client's (as s3blob.URLOpener does).
	bucketOpts.RequestChecksumCalculation = cfg.RequestChecksumCalculation
	return s3blob.OpenBucket(ctx, client, u.Host, &bucketOpts)
}

// s3Params takes the S3-specific query parameters s3blob.URLOpener reads
// out of q and returns what they set; the rest is the AWS configuration's
// (gocloud.dev/aws.V2ConfigFromURLParams).
func s3Params(q url.Values) ([]func(*s3.Options), s3blob.Options, error) {
	var bucketOpts s3blob.Options
	if v := take(q, "ssetype"); v != "" {
		sse, ok := sseType(v)
		if !ok {
			return nil, bucketOpts, fmt.Errorf("%q is not a valid value for %q", v, "ssetype")
		}
		bucketOpts.EncryptionType = sse
	}
	bucketOpts.KMSEncryptionID = take(q, "kmskeyid")
	var clientOpts []func(*s3.Options)
	for _, p := range []struct {
		key string
		set func(*s3.Options, bool)
	}{
		{"accelerate", func(o *s3.Options, v bool) { o.UseAccelerate = v }},
		{"disable_https", func(o *s3.Options, v bool) { o.EndpointOptions.DisableHTTPS = v }},
		{"use_path_style", func(o *s3.Options, v bool) { o.UsePathStyle = v }},
		{"s3ForcePathStyle", func(o *s3.Options, v bool) { o.UsePathStyle = v }},
	} {
		raw := take(q, p.key)
		if raw == "" {
			continue
		}
		v, err := strconv.ParseBool(raw)
		if err != nil {
			return nil, bucketOpts, fmt.Errorf("invalid value for %q: %w", p.key, err)
		}
		clientOpts = append(clientOpts, func(o *s3.Options) { p.set(o, v) })
	}
	return clientOpts, bucketOpts, nil
}

// take removes key from q and returns its value.
func take(q url.Values, key string) string {
	v := q.Get(key)
	q.Del(key)
	return v
}

func sseType(v string) (types.ServerSideEncryption, bool) {
	for _, t := range types.ServerSideEncryptionAes256.Values() {
		if strings.EqualFold(string(t), v) {
			return t, true
		}
	}
	return "", false
}

// sdkLog is the AWS SDK's logger: its warnings become slog records at
// level Warn, everything else Debug, with the attribute source=aws-sdk.
// The slog logger is set after Open (Store.WithLogger), hence the atomic.
type sdkLog struct{ logger atomic.Pointer[slog.Logger] }

func (l *sdkLog) Logf(class logging.Classification, format string, v ...any) {
	logger := l.logger.Load()
	if logger == nil {
		logger = slog.Default()
	}
	level := slog.LevelDebug
	if class == logging.Warn {
		level = slog.LevelWarn
	}
	logger.Log(context.Background(), level, fmt.Sprintf(format, v...), "source", "aws-sdk")
}
