/** One line of `helix doctor`: a leaf module, so doctor.ts and doctor-remote.ts share it without importing each other. */
export type CheckLevel = 'ok' | 'warn' | 'fail'

export interface DoctorCheck {
  level: CheckLevel
  what: string
  detail: string
  /** how to fix it (warn/fail) */
  fix?: string
}
