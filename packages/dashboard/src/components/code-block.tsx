import { CopyButton } from './copy-button';

export function CodeBlock({ code, label }: { code: string; label: string }) {
  return (
    <div className="code-block">
      <pre tabIndex={0} aria-label={label}>
        <code>{code}</code>
      </pre>
      <div className="code-copy">
        <CopyButton text={code} label={`Copy ${label}`} className="btn btn-secondary btn-small">
          Copy
        </CopyButton>
      </div>
    </div>
  );
}
