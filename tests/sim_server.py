"""A local OpenAI-compatible chat server for tests: it answers each prompt with a function of its messages (a simulated
model), so a tool that speaks the OpenAI API (Inspect's `openai-api/...`, verifiers' client) runs end to end offline."""
import inspect, json, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class SimServer:
    """`with SimServer(answer) as url:` serves `POST {url}/chat/completions`, answering `answer(messages) -> str`, or
    `answer(messages, seed) -> str` for a function of two parameters. It honours `n` (n choices) and `seed` (choice i is
    answered with seed + i, None without one); `requests` holds every body."""
    def __init__(self, answer):
        self.answer, self.requests = answer, []
        self.seeded = len(inspect.signature(answer).parameters) == 2

    def __enter__(self) -> str:
        server = self
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a): pass
            def do_GET(self):  # /v1/models
                self._send({'object': 'list', 'data': [{'id': 'sim', 'object': 'model', 'owned_by': 'l0kit'}]})
            def do_POST(self):
                if not self.path.endswith('/chat/completions'):  # /tokenize and the like: not served, as by OpenAI
                    self.send_response(404); self.send_header('Content-Length', '0'); self.end_headers(); return
                body = json.loads(self.rfile.read(int(self.headers['Content-Length'])))
                server.requests.append(body)
                n, seed = body.get('n', 1), body.get('seed')
                texts = [server.answer(body['messages'], None if seed is None else seed + i) if server.seeded else server.answer(body['messages'])
                         for i in range(n)]
                self._send({'id': f"sim-{len(server.requests)}", 'object': 'chat.completion', 'created': int(time.time()), 'model': body.get('model', 'sim'),
                            'choices': [{'index': i, 'message': {'role': 'assistant', 'content': t}, 'finish_reason': 'stop'} for i, t in enumerate(texts)],
                            'usage': {'prompt_tokens': 10, 'completion_tokens': 10 * n, 'total_tokens': 10 + 10 * n}})
            def _send(self, obj):
                b = json.dumps(obj).encode()
                self.send_response(200); self.send_header('Content-Type', 'application/json'); self.send_header('Content-Length', str(len(b)))
                self.end_headers(); self.wfile.write(b)
        self.httpd = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __exit__(self, *exc):
        self.httpd.shutdown(); self.httpd.server_close()

def text_of(content) -> str:
    "The text of an OpenAI message's content (a string or a list of parts)."
    return content if isinstance(content, str) else ''.join(p.get('text', '') for p in content)
