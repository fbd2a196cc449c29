/**
 * `Expect` on both listeners. A client that sends `Expect: 100-continue`
 * waits for a go-ahead before it sends the body; Node would give it at once.
 * Here it is given only when the request starts reading its body, after every
 * check that may refuse it (auth, bucket, cap, size, limits): a refused
 * request is answered with its final status instead, and its connection
 * closed, so the client never sends bytes that would be thrown away and no
 * unsent body is mistaken for the next request. An empty `Expect:` (some S3
 * clients send one) asks for nothing and is served as if absent; any other
 * expectation is 417, as Node answers it.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

export function answerExpectations(server: Server): void {
  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    continueWhenRead(request, response);
    server.emit('request', request, response);
  });
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    if ((request.headers.expect ?? '').trim() === '') {
      server.emit('request', request, response);
      return;
    }
    response.writeHead(417, { connection: 'close' });
    response.end();
  });
}

function continueWhenRead(request: IncomingMessage, response: ServerResponse): void {
  // Until the client has been told to go on, an answer closes the connection: the body it holds back never comes.
  const keepAlive = response.shouldKeepAlive;
  response.shouldKeepAlive = false;
  const goAhead = (event: string | symbol) => {
    if (event !== 'data' && event !== 'readable') return;
    request.off('newListener', goAhead);
    if (response.headersSent || response.writableEnded) return;
    response.shouldKeepAlive = keepAlive;
    response.writeContinue();
  };
  request.on('newListener', goAhead);
}
