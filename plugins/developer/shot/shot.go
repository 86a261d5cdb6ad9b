// Package shot takes screenshots of a page in headless Chromium through chromedp, for
// developer.screenshot. Each screenshot starts its own browser with a throwaway profile and
// ends it: nothing of one page reaches the next.
package shot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/chromedp/chromedp"
)

// ErrNoBrowser means no Chromium was found.
var ErrNoBrowser = errors.New("no Chromium on this machine: install Debian's chromium package (or Google Chrome) for screenshots")

// Find returns the path of a Chromium, or ErrNoBrowser.
func Find() (string, error) {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNoBrowser
}

// Chromium takes screenshots with the browser at Path (Find's when empty).
type Chromium struct {
	Path string // the browser's executable; empty: Find's
}

// Screenshot loads url in a window width × height wide and returns a PNG of the whole page.
func (c Chromium) Screenshot(ctx context.Context, url string, width, height int) ([]byte, error) {
	path := c.Path
	if path == "" {
		var err error
		if path, err = Find(); err != nil {
			return nil, err
		}
	}
	profile, err := os.MkdirTemp("", "buddi-shot-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(profile)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.UserDataDir(profile), chromedp.WindowSize(width, height))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.WithoutCancel(ctx), opts...)
	defer cancelAlloc()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	if err := chromedp.Do(bctx, chromedp.EmulateViewport(int64(width), int64(height)), chromedp.Navigate(url)); err != nil {
		return nil, fmt.Errorf("load %s: %w", url, err)
	}
	// Let the page's scripts draw.
	settle, cancelSettle := context.WithTimeout(bctx, 2*time.Second)
	_, _ = chromedp.Run(settle, chromedp.Poll[bool](`document.readyState === 'complete'`))
	cancelSettle()
	png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		return nil, fmt.Errorf("screenshot %s: %w", url, err)
	}
	return png, nil
}
