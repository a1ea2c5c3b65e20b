/**
 * `troupe/report`: a run as one self-contained HTML page, rendered from its
 * run log (`troupe report` on the command line).
 * @module troupe/report
 * @category Views
 */
export { renderRunReport, renderReportData, type RunReportOptions, type RunReportSource } from './render.js';
export {
  buildReportData,
  type ReportAttempt,
  type ReportBar,
  type ReportChunk,
  type ReportDataOptions,
  type ReportLane,
  type ReportLoop,
  type ReportMarker,
  type ReportOp,
  type ReportPlan,
  type ReportToolCall,
  type ReportTurn,
  type ReportUsageRow,
  type RunReportData,
} from './data.js';
