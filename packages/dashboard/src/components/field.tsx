import { useId, type InputHTMLAttributes, type ReactNode } from 'react';
import { Icon } from './icons';

type FieldProps = Omit<InputHTMLAttributes<HTMLInputElement>, 'id'> & {
  label: string;
  hint?: ReactNode;
  /** Shown under the input and announced; marks the input invalid. */
  error?: string | null;
};

/** A labelled input whose hint and error are tied to it with aria-describedby. The error, when there is one, takes the hint's place: it says the same thing, sharper. */
export function Field({ label, hint, error, className, ...input }: FieldProps) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const shownHint = error ? null : hint;
  const describedBy = (error ? errorId : shownHint ? hintId : '') || undefined;
  return (
    <div className={`field${className ? ` ${className}` : ''}`}>
      <label className="field-label" htmlFor={id}>
        {label}
      </label>
      <input id={id} className="input" aria-invalid={error ? true : undefined} aria-describedby={describedBy} {...input} />
      {error ? (
        <p className="field-error" id={errorId}>
          <Icon name="alert" size={14} /> {error}
        </p>
      ) : null}
      {shownHint ? (
        <p className="field-hint" id={hintId}>
          {shownHint}
        </p>
      ) : null}
    </div>
  );
}
