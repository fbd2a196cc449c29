import { useCallback, useEffect, useRef } from 'react';
import { useToast } from './toast';

/**
 * Zip downloads (README, "Zip downloads"): a folder by `GET …/zip?prefix=`,
 * a selection by an HTML form POST of its names, both submitted into a hidden
 * iframe. The browser saves the zip as it streams (nothing is held in the
 * page's memory), and a refusal's JSON lands in the iframe, where it is read
 * and shown as a toast instead of replacing the page.
 */
export function useZipDownload(bucketId: number) {
  const { notify } = useToast();
  const frame = useRef<HTMLIFrameElement | null>(null);

  useEffect(
    () => () => {
      frame.current?.remove();
      frame.current = null;
    },
    [],
  );

  const target = useCallback((): string => {
    if (frame.current) return frame.current.name;
    const iframe = document.createElement('iframe');
    iframe.name = `pail-zip-${Math.random().toString(36).slice(2)}`;
    iframe.hidden = true;
    iframe.title = 'Zip downloads';
    // A download fires no load event; a page (an error's JSON) does.
    iframe.addEventListener('load', () => {
      const text = iframe.contentDocument?.body?.textContent ?? '';
      if (!text) return;
      notify(`Could not download the zip: ${errorText(text)}`, 'error');
    });
    document.body.append(iframe);
    frame.current = iframe;
    return iframe.name;
  }, [notify]);

  const submit = useCallback(
    (method: 'get' | 'post', fields: [string, string][]) => {
      const form = document.createElement('form');
      form.method = method;
      form.action = `/api/buckets/${bucketId}/zip`;
      form.target = target();
      form.hidden = true;
      for (const [name, value] of fields) {
        const input = document.createElement('input');
        input.type = 'hidden';
        input.name = name;
        input.value = value;
        form.append(input);
      }
      document.body.append(form);
      form.submit();
      form.remove();
    },
    [bucketId, target],
  );

  /** Everything under `folder` (ending in `/`), as `<folder name>.zip`. */
  const downloadFolder = useCallback((folder: string) => submit('get', [['prefix', folder]]), [submit]);

  /** Files and folders chosen in `prefix`, their entries named relative to it. */
  const downloadSelection = useCallback(
    (prefix: string, filenames: readonly string[], folders: readonly string[]) =>
      submit('post', [
        ['prefix', prefix],
        ...filenames.map((name): [string, string] => ['filenames', name]),
        ...folders.map((name): [string, string] => ['folders', name]),
      ]),
    [submit],
  );

  return { downloadFolder, downloadSelection };
}

function errorText(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: unknown };
    if (typeof body.error === 'string') return body.error;
  } catch {
    // Not JSON: show the start of what came.
  }
  return text.slice(0, 200);
}

/** One file, saved under its own name, by a link the page clicks. */
export function downloadFile(href: string, name: string): void {
  const link = document.createElement('a');
  link.href = href;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
}
