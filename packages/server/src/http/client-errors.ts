/**
 * Answers for a request that never became one: headers that arrived too late
 * (HEADERS_TIMEOUT_SECONDS), headers too large, or bytes that are not HTTP.
 * Node hands these to the server's clientError handler before any route or
 * error handler could see them, and Fastify's own answer is a JSON shape of
 * its own, on the S3 listener too. Here they are the same refusals as any
 * other (AppError), and each listener renders them in its wire format.
 */
import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { errors, type AppError } from '../domain/errors.js';

/**
 * The client went away mid-request (its connection reset or closed before the
 * body ended): nobody is listening for an answer, and nothing failed on our
 * side, so both listeners answer it as the client's doing and log it quietly.
 * Judged by the error, not by the request's state: a failing store also
 * destroys the request stream.
 */
export function isClientAbort(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE' || message === 'aborted';
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * A Fastify `clientErrorHandler`: writes `render`'s answer to the refusal and
 * closes the connection. The response on the connection for an earlier,
 * whole request (pipelined) is sent first, and the one Node moves on to when
 * it ends; one already begun for the broken request itself is not cut into:
 * the connection just closes. (Node keeps further queued responses out of
 * sight, so with three or more requests pipelined before the broken bytes the
 * last answers can be lost, as they were with Fastify's default.) Node may
 * report the same connection again while it waits: it is refused once.
 */
export function clientErrorHandler(render: (refusal: AppError) => RawAnswer): (error: NodeJS.ErrnoException, socket: Socket) => void {
  const refusing = new WeakSet<Socket>();
  return (error, socket) => {
    if (error.code === 'ECONNRESET' || socket.destroyed || refusing.has(socket)) return;
    refusing.add(socket);
    const refuse = (answer: boolean) => {
      if (answer && socket.writable) socket.write(rawResponse(render(refusalOf(error))));
      socket.destroy();
    };
    const afterOwedResponses = (): void => {
      const owed = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
      if (!owed || owed.writableFinished) refuse(true);
      else if (owed.req.complete) owed.once('close', afterOwedResponses);
      else refuse(!owed.headersSent);
    };
    afterOwedResponses();
  };
}

function refusalOf(error: NodeJS.ErrnoException): AppError {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return errors.headersLate();
  if (error.code === 'HPE_HEADER_OVERFLOW') return errors.headersTooLarge();
  return errors.validation('Malformed HTTP request');
}

function rawResponse({ status, headers, body }: RawAnswer): string {
  const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`, 'connection: close', `content-length: ${Buffer.byteLength(body)}`];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}
