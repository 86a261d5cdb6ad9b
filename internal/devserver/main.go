// Command devserver is a tiny development server the end-to-end tests start in a workspace
// (through developer.start) to preview: a page whose script opens a websocket back to the
// server, which answers the first message it gets. It listens on 127.0.0.1 at the port its one argument names.
package main

import (
	"fmt"
	"log"
	"net/http"
	"os"

	"github.com/gorilla/websocket"
)

const page = `<!doctype html><meta charset="utf-8"><title>devserver</title>
<h1>Hello from the dev server</h1><p id="ws">waiting</p>
<script>
const ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + location.pathname.replace(/[^/]*$/, '') + 'ws');
ws.onopen = () => ws.send('ping');
ws.onmessage = m => { document.getElementById('ws').textContent = m.data; };
</script>`

func main() {
	up := websocket.Upgrader{}
	mux := http.NewServeMux()
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		_, msg, err := c.ReadMessage()
		if err != nil {
			return
		}
		_ = c.WriteMessage(websocket.TextMessage, []byte("pong to "+string(msg)+" via websocket"))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	})
	if len(os.Args) != 2 {
		log.Fatal("usage: devserver PORT")
	}
	log.Fatal(http.ListenAndServe("127.0.0.1:"+os.Args[1], mux))
}
